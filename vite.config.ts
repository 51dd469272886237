import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';

// The page is fully static: everything it needs (shaders, checkpoints) ships in dist/.
export default defineConfig({
  plugins: [react()],
  base: './',
  worker: { format: 'es' },
  build: { target: 'es2022', sourcemap: true },
  server: { port: 5173 },
  preview: { port: 4173 },
});
