// The exit protocol every command-line entry shares: the number `main` resolves to is the exit
// status (0 when it resolves to nothing); a thrown error prints its message, or its stack with
// `stack: true`, and exits 1. Exiting explicitly also ends a process a GPU device keeps alive.
export function runCli(main: () => Promise<number> | Promise<void>, opts: { stack?: boolean } = {}): void {
  main().then(
    (code) => process.exit(code ?? 0),
    (e: unknown) => {
      console.error(e instanceof Error ? ((opts.stack ? e.stack : undefined) ?? e.message) : e);
      process.exit(1);
    },
  );
}
