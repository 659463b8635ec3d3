'use strict';
// Loads the compiled addon: TUREEN_NODE_ADDON names it, else the one
// `make node-addon` builds into the repository's build/ directory.
const path = require('node:path');

const file = process.env.TUREEN_NODE_ADDON || path.join(__dirname, '..', '..', '..', 'build', 'node', 'tureen.node');

module.exports = require(file);
