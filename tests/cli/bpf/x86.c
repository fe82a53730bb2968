// Fixture: an ordinary x86-64 object (not EM_BPF), compiled with clang for the host.
int xdp_prog(void) { return 2; }
