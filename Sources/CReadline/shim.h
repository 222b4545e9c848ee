#ifndef MEDIAHOST_CREADLINE_SHIM_H
#define MEDIAHOST_CREADLINE_SHIM_H

#include <stdio.h>
#include <stdlib.h>
#include <readline/readline.h>
#include <readline/history.h>

/* Typed accessors for readline globals, so Swift sees plain functions. */
static inline void mh_rl_set_completion(rl_completion_func_t *function) {
    rl_attempted_completion_function = function;
}
static inline void mh_rl_no_default_completion(void) { rl_attempted_completion_over = 1; }
static inline void mh_rl_set_name(const char *name) { rl_readline_name = name; }
static inline const char *mh_rl_line_buffer(void) { return rl_line_buffer; }
/* Called about ten times a second while readline waits for a key: the REPL redraws progress. */
static inline void mh_rl_set_event_hook(rl_hook_func_t *hook) {
    rl_event_hook = hook;
    rl_set_keyboard_input_timeout(100000);
}

#endif
