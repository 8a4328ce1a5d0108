#ifndef VITRINE_CGPIOD_SHIM_H
#define VITRINE_CGPIOD_SHIM_H
/*
 * libgpiod 1.6 (Debian bookworm, Raspberry Pi OS). Its request flags are built with a GPIOD_BIT macro Swift does
 * not import, and the request config is filled here so Swift passes plain integers. libgpiod 2 changed the whole
 * API; only VitrineRuntime's GPIOLineInput calls these.
 */
#include <errno.h>
#include <gpiod.h>

static const int VITRINE_GPIOD_FLAG_ACTIVE_LOW = GPIOD_LINE_REQUEST_FLAG_ACTIVE_LOW;
static const int VITRINE_GPIOD_FLAG_BIAS_DISABLE = GPIOD_LINE_REQUEST_FLAG_BIAS_DISABLE;
static const int VITRINE_GPIOD_FLAG_BIAS_PULL_DOWN = GPIOD_LINE_REQUEST_FLAG_BIAS_PULL_DOWN;
static const int VITRINE_GPIOD_FLAG_BIAS_PULL_UP = GPIOD_LINE_REQUEST_FLAG_BIAS_PULL_UP;
static const int VITRINE_GPIOD_EVENT_RISING = GPIOD_LINE_EVENT_RISING_EDGE;

/* Requests `line` as an input reporting both edges, with `flags` (active-low, bias). 0, or -1 with errno. */
static inline int vitrine_gpiod_request_both_edges(struct gpiod_line *line, const char *consumer, int flags) {
    struct gpiod_line_request_config config = {consumer, GPIOD_LINE_REQUEST_EVENT_BOTH_EDGES, flags};
    return gpiod_line_request(line, &config, 0);
}

#endif
