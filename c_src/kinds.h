/*
 * kinds.h - the one list of the NIF's handle kinds. Every per-kind thing is derived from it: the
 * resource types and their destructors (resources.c), the live lists close_all walks (live.c),
 * what the reaper closes (reaper.c), the names in error messages.
 *
 * X(KIND, name, "resource type name", "what it is, in messages"), in the order close_all closes
 * them: children first (the core's references make any order correct; this one lets each close
 * free its object at once). The resource type names are what an upgrade takes over by: never
 * rename one. The kinds before VIEW own a core handle that close/1, the destructor and close_all
 * take through one function (nif_handle_close); a view owns none, it only keeps its shared
 * buffer alive, so it comes last. (The C core's own object kinds, src/object.h, are another
 * layer's: these are the Erlang-side wrappers.)
 */
#ifndef HTPU_NIF_KINDS_H
#define HTPU_NIF_KINDS_H

#define NIF_HANDLE_KINDS(X)                                     \
  X(SHARED, shared, "htpu_shared", "shared IO buffer")          \
  X(GRAPH, graph, "htpu_graph", "graph")                        \
  X(CONTEXT, context, "htpu_context", "context")                \
  X(RUNTIME, runtime, "htpu_runtime", "runtime")                \
  X(VIEW, view, "htpu_shared_view", "shared IO view")

typedef enum nif_kind {
#define NIF_KIND_ENUM_(K, name, type_name, what) NIF_KIND_##K,
  NIF_HANDLE_KINDS(NIF_KIND_ENUM_)
#undef NIF_KIND_ENUM_
  NIF_KINDS /* none: not a resource this library made */
} nif_kind;

/* The kinds that own a core handle: those before VIEW. */
#define NIF_OWNING_KINDS NIF_KIND_VIEW

#endif
