/* Fault injection for tests: a member wrapper (src/sim/member_fault.c) that
 * fails, shortens or corrupts the requests its rules match. Not part of
 * liburaid: tests link it from liburaid_sim.a. */
#ifndef URAID_SIM_MEMBER_FAULT_H
#define URAID_SIM_MEMBER_FAULT_H

#include <stdbool.h>
#include <stdint.h>

#include "member/member.h"

/* Wrap a member; the wrapper owns `inner`.
 *
 * A request matches a rule when the op is the same and its byte range
 * overlaps the rule's (FLUSH rules ignore ranges). Every matching request
 * counts for the rule; the rule fires on matching requests after the first
 * `after` ones (after = 0: from the first). When several rules fire, the one
 * added first applies. A firing counts as a hit.
 * Effects, in precedence: error (nothing transferred), else short_io (the
 * first len - len/2 bytes, half rounded up, are transferred and that count
 * returned, so retrying the rest always completes), and flip_bit
 * (bit 0 of the first transferred byte inside the rule's range is inverted:
 * in the returned data for reads, in the data stored for writes; the
 * caller's buffer is never modified). Discards pass straight through.
 * member_fault_clear drops all rules; the hit count stays. While no rule is
 * set, a mapped inner member's bytes are the wrapper's (member_map_addr);
 * with one set, none are (every request passes the rules). */
struct member_fault_rule {
	enum member_op op; /* READ, WRITE or FLUSH */
	uint64_t off, len; /* byte range the rule covers (len 0 = everything) */
	uint64_t after;    /* trigger only after this many matching requests */
	int error;         /* return -error (e.g. EIO); 0 = no error */
	bool short_io;     /* transfer half and return a short count */
	bool flip_bit;     /* flip one bit of the data (see above) */
	bool once;         /* disarm after the first hit */
};
int member_fault_wrap(struct member *inner, struct member **out);
int member_fault_add(struct member *fault, const struct member_fault_rule *rule);
void member_fault_clear(struct member *fault);
uint64_t member_fault_hits(const struct member *fault);

#endif
