package shrimp

// SCAFFOLD: being built (E2: target). E2 replaces this file.
