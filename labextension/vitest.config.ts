import { defineConfig } from 'vitest/config';

// jsdom: the extension's modules use the page's globals (window timers, requestAnimationFrame,
// WebSocket's constants, document) as JupyterLab gives them. The log leaves out Yjs's "Invalid
// access" warning: @jupyter/ydoc's own createCell reads a cell's Yjs types before they join the
// document, ~9 warnings a cell inserted (in JupyterLab's console too), nothing of this extension's.
// isolate: false — the files share their workers' module graphs and jsdom (2 s instead of 4.5 s; no
// file keeps state another reads: passes shuffled).
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    isolate: false,
    environment: 'jsdom',
    setupFiles: ['test/setup.ts'],
    onConsoleLog: log => !log.startsWith('Invalid access: Add Yjs type to a document before reading data.')
  }
});
