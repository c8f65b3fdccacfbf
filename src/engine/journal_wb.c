/* Write-back journal cache (placeholder until implemented). */
#include <errno.h>

#include "engine/journal.h"

int eng_wb_enable(struct uraid_array *a)
{
	(void)a;
	return -ENOTSUP;
}
void eng_wb_free(struct uraid_array *a)
{
	(void)a;
}
int eng_wb_write(struct uraid_array *a, const uint8_t *buf, uint64_t lsec, uint64_t nsec)
{
	return -ENOTSUP;
}
void eng_wb_overlay(struct uraid_array *a, uint8_t *buf, uint64_t lsec, uint64_t nsec)
{
}
int eng_wb_flush(struct uraid_array *a)
{
	return 0;
}
bool eng_wb_has(const struct uraid_array *a)
{
	return false;
}
uint64_t eng_wb_pages(const struct uraid_array *a)
{
	return 0;
}
