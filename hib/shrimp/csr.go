package shrimp

// SCAFFOLD: being built (E2: csr). E2 replaces this file.
