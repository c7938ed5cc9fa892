// GraphiQL's stylesheet embeds its fonts as `data:` URLs, which the service's
// Content-Security-Policy (`font-src 'self'`) rightly refuses. This plugin writes
// each embedded font out as a file of the bundle and points the stylesheet at it,
// so the page keeps the same policy as the explorer.
import type { Plugin } from "vite";

const EMBEDDED_FONT = /url\(\s*["']?data:font\/(woff2?|ttf|otf);base64,([A-Za-z0-9+/=]+)["']?\s*\)/g;

function decode(base64: string): Uint8Array {
  return Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
}

export function fontsAsFiles(): Plugin {
  return {
    name: "memlattice-fonts-as-files",
    apply: "build",
    generateBundle(_options, bundle) {
      for (const asset of Object.values(bundle)) {
        if (asset.type !== "asset" || !asset.fileName.endsWith(".css")) continue;
        const css = typeof asset.source === "string" ? asset.source : new TextDecoder().decode(asset.source);
        const rewritten = css.replace(EMBEDDED_FONT, (_match, format: string, base64: string) => {
          const reference = this.emitFile({ type: "asset", name: `font.${format}`, source: decode(base64) });
          // The stylesheet and the fonts both live in assets/: a relative URL.
          const fileName = this.getFileName(reference).split("/").pop();
          return `url(${fileName})`;
        });
        asset.source = rewritten;
      }
    },
  };
}
