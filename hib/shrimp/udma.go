package shrimp

// SCAFFOLD: being built (E2: udma). E2 replaces this file.
