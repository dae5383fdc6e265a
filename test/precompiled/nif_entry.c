/* nif_entry.c - load a NIF shared object without a VM and print what nif_init returns.
 *
 *   nif_entry NIF.so MODULE MAJOR.MINOR
 *
 * dlopen()s the NIF with RTLD_LAZY (its enif_* imports stay unresolved until called, and
 * nothing here calls them), resolves nif_init, calls it (it only returns a pointer to a static
 * ErlNifEntry) and checks the fields ERTS checks when it loads a NIF: the version the NIF was
 * compiled for (ERTS takes major == its own and minor <= its own), the module name (must equal
 * the module calling erlang:load_nif/2), the VM variant, and the function table. Built for
 * aarch64 and run under qemu-user by test/precompiled/run.sh, so the aarch64 artifact is
 * checked even where no aarch64 BEAM is at hand. Exit 0 when all match, 1 otherwise.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include <erl_nif.h>

typedef ErlNifEntry *nif_init_fn(void);

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: %s NIF.so MODULE MAJOR.MINOR\n", argv[0]);
        return 2;
    }
    int want_major = 0, want_minor = 0;
    if (sscanf(argv[3], "%d.%d", &want_major, &want_minor) != 2) {
        fprintf(stderr, "nif_entry: bad version %s\n", argv[3]);
        return 2;
    }
    void *lib = dlopen(argv[1], RTLD_LAZY | RTLD_LOCAL);
    if (!lib) {
        fprintf(stderr, "nif_entry: dlopen: %s\n", dlerror());
        return 1;
    }
    nif_init_fn *init;
    *(void **)&init = dlsym(lib, "nif_init");
    if (!init) {
        fprintf(stderr, "nif_entry: no nif_init: %s\n", dlerror());
        return 1;
    }
    const ErlNifEntry *e = init();
    int ok = e != NULL;
    if (ok) {
        printf("nif_init: version %d.%d, module %s, %d functions, variant %s, min_erts %s, "
               "load %s, upgrade %s, unload %s\n",
               e->major, e->minor, e->name, e->num_of_funcs,
               e->vm_variant ? e->vm_variant : "(none)", e->min_erts ? e->min_erts : "(none)",
               e->load ? "yes" : "no", e->upgrade ? "yes" : "no", e->unload ? "yes" : "no");
        for (int i = 0; i < e->num_of_funcs; i++)
            printf("  %s/%u%s\n", e->funcs[i].name, e->funcs[i].arity,
                   e->funcs[i].flags == ERL_NIF_DIRTY_JOB_IO_BOUND    ? " (dirty IO)"
                   : e->funcs[i].flags == ERL_NIF_DIRTY_JOB_CPU_BOUND ? " (dirty CPU)"
                                                                      : "");
        ok = e->major == want_major && e->minor == want_minor && strcmp(e->name, argv[2]) == 0 &&
             e->vm_variant && strcmp(e->vm_variant, "beam.vanilla") == 0 && e->num_of_funcs > 0;
    }
    printf("nif_entry: %s (expected version %d.%d, module %s)\n", ok ? "ok" : "FAIL", want_major,
           want_minor, argv[2]);
    return ok ? 0 : 1;
}
