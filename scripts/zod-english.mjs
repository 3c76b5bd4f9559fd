/**
 * An esbuild plugin for the bundles started at every run (packages/proxy/bundle.mjs,
 * servers/ts/build.mjs): zod 4's `locales` namespace with English only.
 *
 * zod re-exports every language's error messages as `z.locales` (and `z.core.locales`, and in
 * zod/mini's namespace); a bundle cannot drop them by tree shaking, because `import { z } from "zod"`
 * is the namespace object. They were 404 KB of the proxy's 1.6 MB bundle: parsed, cached and
 * deserialized at every start, and their objects built by the bundle's top level, though nothing
 * here calls `z.config(z.locales.xx())`. The proxy reads only static properties of zod/mini's
 * namespace, which esbuild does drop the languages for; there this keeps them out should a namespace
 * be used as a value (`z.core`, `z.locales`), and bundle.mjs fails the build if one gets in anyway.
 * English stays what it is, the default that zod registers itself (classic/schemas.js imports
 * ../locales/en.js directly; for zod/mini, packages/protocol/src/zodEnglish.ts does). A program that
 * asked for another language would find it missing (`z.locales.fr` undefined) and fail at that call,
 * not fall back silently.
 */
import { join } from "node:path";

const ZOD_LOCALES_IMPORTER = /[\\/]zod[\\/]v4[\\/](classic|core|mini)[\\/][^\\/]+\.js$/;

export const zodEnglishOnly = {
  name: "zod-english-only",
  setup(build) {
    build.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, (args) =>
      ZOD_LOCALES_IMPORTER.test(args.importer)
        ? { path: join(args.resolveDir, "..", "locales", "english-only.js"), namespace: "zod-english-only" }
        : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: "zod-english-only" }, (args) => ({
      contents: `export { default as en } from ${JSON.stringify(join(args.path, "..", "en.js"))};\n`,
      loader: "js",
      resolveDir: join(args.path, ".."),
    }));
  },
};
