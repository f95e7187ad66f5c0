// The `engine` CLI as one module, for tests and tools: main (dispatch.ts) with the whole command
// table (command-table.ts) loaded. The executable's entry (engine.ts) imports dispatch.ts instead,
// which imports a command's own file on use.
export { main } from './dispatch.ts';
export { TABLE } from './command-table.ts';
