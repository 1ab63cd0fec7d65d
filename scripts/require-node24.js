// Every script of this project runs on the Node.js 24 that npm installs from the `node` package
// (node_modules/.bin/node). The machines ship Node 20, which @kubernetes/client-node 2.x does not support.
const major = Number(process.versions.node.split('.')[0]);
if (major !== 24) {
  console.error(`kubeflow-upgrader needs Node.js 24 (found ${process.version}); run it through npm scripts, which use node_modules/.bin/node.`);
  process.exit(1);
}
