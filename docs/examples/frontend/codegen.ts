// graphql-codegen reads the schema the server checks in (schema.graphql, generated
// from the code and compared with the live introspection by a test) and the
// operations in src/, and writes typed documents to src/gql/.
import type { CodegenConfig } from "@graphql-codegen/cli";

const config: CodegenConfig = {
  schema: "../../../schema.graphql",
  documents: ["src/**/*.ts", "!src/gql/**"],
  ignoreNoDocuments: false,
  generates: {
    "src/gql/": {
      preset: "client",
      presetConfig: { fragmentMasking: false },
      config: {
        strictScalars: true,
        scalars: { DateTime: "string", JSON: "unknown", Vector: "number[]" },
        enumsAsTypes: true,
        useTypeImports: true,
      },
    },
  },
};

export default config;
