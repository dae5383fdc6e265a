/*
 * printable.h - a name from outside (a file name, a node name read from a model) made safe to
 * put in a message: a name holding a newline or an escape sequence would otherwise forge lines
 * or colours in a terminal or a log, and bytes that are not UTF-8 would make the message
 * invalid text for JSON and Elixir strings.
 */
#ifndef HTPU_PRINTABLE_H
#define HTPU_PRINTABLE_H

#include <stddef.h>

/* Writes the len bytes at s into out (out_len bytes, NUL-terminated) with control bytes, DEL,
 * the backslash and every byte that is not part of well-formed UTF-8 escaped C-style (\n, \t,
 * \\, \xHH); ends with "..." when it does not fit. Returns out. */
const char *printable(const void *s, size_t len, char *out, size_t out_len);

/* printable() of a C string. */
const char *printable_str(const char *s, char *out, size_t out_len);

#endif
