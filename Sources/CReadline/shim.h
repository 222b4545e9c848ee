#ifndef MEDIAHOST_CREADLINE_SHIM_H
#define MEDIAHOST_CREADLINE_SHIM_H

#include <signal.h>
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
/* SIGINT for the interactive REPL: the handler only notes it (async-signal-safe); readline's
   event hook and the running command's watcher take the note. readline itself does not catch
   signals, so a Ctrl-C is never lost in its handlers. An optimized build may give each object
   file its own copy of a header's static variable: call these from one Swift file only
   (REPL+Interactive.swift). */
static volatile sig_atomic_t mh_interrupts = 0;
static void mh_note_interrupt(int signal) { (void)signal; mh_interrupts = 1; }
static inline void mh_catch_interrupts(void) {
    struct sigaction action;
    action.sa_handler = mh_note_interrupt;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;
    sigaction(SIGINT, &action, NULL);
    rl_catch_signals = 0;
}
/* Whether Ctrl-C was pressed since the last call. */
static inline int mh_take_interrupt(void) {
    int pressed = mh_interrupts;
    mh_interrupts = 0;
    return pressed;
}
/* Ctrl-C at the prompt: drop the typed line and start a fresh prompt, as bash does. Called on
   readline's thread (from the event hook), never from a signal handler. */
static inline void mh_rl_discard_line(void) {
    rl_replace_line("", 0);
    rl_point = 0;
    fputs("^C\n", rl_outstream ? rl_outstream : stdout);
    rl_on_new_line();
    rl_redisplay();
}
/* When stdout is not a terminal, readline's prompt, echo and terminal sequences (bracketed
   paste, meta mode) go to stderr, and bracketed paste is off unless that is a terminal: the
   redirected output holds only text. */
static inline void mh_rl_use_stderr_unless_stdout_is_a_terminal(int stdout_is_terminal, int stderr_is_terminal) {
    if (!stdout_is_terminal) rl_outstream = stderr;
    if (!(stdout_is_terminal || stderr_is_terminal)) rl_variable_bind("enable-bracketed-paste", "off");
    if (!stdout_is_terminal && !stderr_is_terminal) rl_variable_bind("enable-meta-key", "off");
}
/* Keys typed before the prompt was there (read while the terminal was asked what it draws):
   readline reads them first, as if typed at the prompt. */
static inline void mh_rl_stuff(const unsigned char *bytes, int count) {
    for (int i = 0; i < count; i++) rl_stuff_char(bytes[i]);
}
/* Called about ten times a second while readline waits for a key: the REPL redraws progress. */
static inline void mh_rl_set_event_hook(rl_hook_func_t *hook) {
    rl_event_hook = hook;
    rl_set_keyboard_input_timeout(100000);
}

#endif
