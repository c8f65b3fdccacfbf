/* Benchmarks run by `uraid bench NAME`. Each gets argv starting at its own
 * name and returns the exit status. bench_parity is in bench_parity.c; the
 * others are weak "not implemented yet" hooks in bench_main.c until their
 * owners define them in their own files. */
#ifndef URAID_BENCH_H
#define URAID_BENCH_H

int bench_parity(int argc, char **argv);
int bench_engine(int argc, char **argv);
int bench_workload(int argc, char **argv);

#endif
