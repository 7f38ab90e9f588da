// Jest counterpart of esbuild's `text` loader: an imported .xsd file is its contents as a string.
module.exports = {
  process(source) {
    return { code: `module.exports = ${JSON.stringify(source)};` };
  },
};
