// The explorer is a static bundle served by the Python app at /explorer/.
// Everything (React, cytoscape) is bundled here at build time; the page loads
// nothing from a CDN, and the app's Content-Security-Policy enforces that.
// graphiql.html is a second page: GraphiQL, served by the app at GET /graphql.
import { defineConfig } from "vite";
import { fontsAsFiles } from "./fonts-as-files.ts";

export default defineConfig({
  base: "/explorer/",
  plugins: [fontsAsFiles()],
  build: {
    // Relative to this folder; the Python package serves it.
    outDir: "../memlattice/explorer_static",
    emptyOutDir: true,
    sourcemap: false,
    chunkSizeWarningLimit: 1200,
    rollupOptions: {
      // GraphiQL's dependencies mark modules "use client" (for React Server Components),
      // which means nothing in a static bundle: not worth a warning per module.
      onwarn(warning, warn) {
        if (warning.code !== "MODULE_LEVEL_DIRECTIVE") warn(warning);
      },
      input: {
        explorer: new URL("index.html", import.meta.url).pathname,
        graphiql: new URL("graphiql.html", import.meta.url).pathname,
      },
    },
  },
  server: {
    // `npm run dev` against a running `memlattice serve`.
    proxy: { "/graphql": "http://127.0.0.1:8000" },
  },
});
