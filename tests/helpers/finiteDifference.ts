// The finite-difference oracle the gradient checks compare against.

/**
 * ∂f/∂x at 0 by the five-point central difference (f(−2h) − 8f(−h) + 8f(h) − f(2h)) / 12h. Its
 * truncation error is h⁴·f⁽⁵⁾/30, where the three-point stencil's is h²·f‴/6: random synthetic
 * models have seeds whose attention is sharp enough (f‴ ≈ 1e6, seen on Llama 3 at h = 1e-5) for
 * the three-point error (1.8e-5) to exceed a 1e-6 tolerance while the gradient is right to 1e-10.
 */
export async function centralDifference(f: (d: number) => number | Promise<number>, h: number): Promise<number> {
  const [m2, m1, p1, p2] = [await f(-2 * h), await f(-h), await f(h), await f(2 * h)];
  return (m2 - 8 * m1 + 8 * p1 - p2) / (12 * h);
}
