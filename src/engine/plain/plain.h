/* The plain personality: linear and raid0 (plain.c). */
#ifndef URAID_ENGINE_PLAIN_H
#define URAID_ENGINE_PLAIN_H

#include "engine/core/engine.h"

extern const struct eng_pers eng_pers_plain;

#endif
