#include "CWebImageCodecs.h"

#include <malloc.h>

int cwi_keep_large_allocations(int mmap_threshold, int trim_threshold) {
    int mapped = mallopt(M_MMAP_THRESHOLD, mmap_threshold);
    int trimmed = mallopt(M_TRIM_THRESHOLD, trim_threshold);
    return mapped == 1 && trimmed == 1 ? 0 : -1;
}
