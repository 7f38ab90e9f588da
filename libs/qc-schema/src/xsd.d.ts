/** XSD files are bundled as text (esbuild loader `text`; jest: libs/qc-schema/jest-text-transform.js). */
declare module '*.xsd' {
  const contents: string;
  export default contents;
}
