// REPL
