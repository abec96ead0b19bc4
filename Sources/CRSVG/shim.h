#define RSVG_DISABLE_DEPRECATION_WARNINGS
#include <librsvg/rsvg.h>
#include <cairo.h>
