// Placeholder for an op family that a backend does not implement yet: any call throws a clear
// error naming the op. Removed once every family is implemented on both backends.
export function stubOps<T extends object>(family: string, backend: string): T {
  return new Proxy({} as T, {
    get(_target, prop) {
      return () => {
        throw new Error(`${family}.${String(prop)} is not implemented on the ${backend} backend yet`);
      };
    },
  });
}
