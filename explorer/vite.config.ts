// The explorer is a static bundle served by the Python app at /explorer/.
// Everything (React, cytoscape) is bundled here at build time; the page loads
// nothing from a CDN, and the app's Content-Security-Policy enforces that.
import { defineConfig } from "vite";

export default defineConfig({
  base: "/explorer/",
  build: {
    // Relative to this folder; the Python package serves it.
    outDir: "../memlattice/explorer_static",
    emptyOutDir: true,
    sourcemap: false,
    chunkSizeWarningLimit: 1200,
  },
  server: {
    // `npm run dev` against a running `memlattice serve`.
    proxy: { "/graphql": "http://127.0.0.1:8000" },
  },
});
