// Reduces straight RGBA to a palette of at most N colours for PNG's palette output (imgproxy's
// IMGPROXY_PNG_QUANTIZE). libvips does this with libimagequant, which is GPL-3.0 since 2.12 and
// cannot go into this Apache-2.0 project, so it is done here: an image with no more colours than
// asked keeps them exactly; otherwise median cut over the colours at 5 bits a channel (4 for
// alpha), each box's weighted mean its palette entry, and Floyd-Steinberg error diffusion (what
// libvips' default dither of 1.0 asks of libimagequant) while mapping.
#include "CWebImageCodecs.h"

#include <stdlib.h>
#include <string.h>

/// One colour at reduced precision and what the image holds of it.
typedef struct {
    uint32_t key;
    uint32_t count;
    uint64_t sum[4];
    /// The mean of the channel a box is being split along, for sorting.
    uint8_t order;
} bucket;

/// A run of buckets that will become one palette entry.
typedef struct {
    size_t first;
    size_t count;
    uint64_t pixels;
    int channel;
    double error;
} box;

static uint32_t reduced_key(const uint8_t *pixel) {
    return (uint32_t)(pixel[0] >> 3) << 14 | (uint32_t)(pixel[1] >> 3) << 9 | (uint32_t)(pixel[2] >> 3) << 4 | (pixel[3] >> 4);
}

static uint32_t hash(uint32_t key) { return key * 2654435761u; }

/// The image's colours as palette and indexes, exactly, when there are at most `limit`; -1 when
/// there are more.
static int exact_colors(const uint8_t *rgba, size_t count, int limit, uint8_t *indexes, uint8_t *palette) {
    enum { slots = 1024 };
    uint32_t table[slots];
    uint8_t entry[slots];
    uint8_t used[slots] = {0};
    int found = 0;
    for (size_t i = 0; i < count; i++) {
        uint32_t color;
        memcpy(&color, rgba + i * 4, 4);
        uint32_t slot = hash(color) & (slots - 1);
        while (used[slot] && table[slot] != color) slot = (slot + 1) & (slots - 1);
        if (!used[slot]) {
            if (found == limit) return -1;
            used[slot] = 1;
            table[slot] = color;
            entry[slot] = (uint8_t)found;
            memcpy(palette + found * 4, &color, 4);
            found += 1;
        }
        indexes[i] = entry[slot];
    }
    return found;
}

/// The buckets of reduced colours in the image, or NULL without memory.
static bucket *histogram(const uint8_t *rgba, size_t count, size_t *bucket_count) {
    size_t capacity = 1024;
    while (capacity < count * 2 && capacity < (1u << 21)) capacity *= 2;
    bucket *table = calloc(capacity, sizeof(bucket));
    if (table == NULL) return NULL;
    size_t used = 0;
    for (size_t i = 0; i < count; i++) {
        const uint8_t *pixel = rgba + i * 4;
        uint32_t key = reduced_key(pixel) + 1;  // 0 marks an empty slot
        size_t slot = hash(key) & (capacity - 1);
        while (table[slot].key != 0 && table[slot].key != key) slot = (slot + 1) & (capacity - 1);
        if (table[slot].key == 0) {
            table[slot].key = key;
            used += 1;
        }
        table[slot].count += 1;
        for (int c = 0; c < 4; c++) table[slot].sum[c] += pixel[c];
    }
    size_t packed = 0;
    for (size_t slot = 0; slot < capacity; slot++) {
        if (table[slot].key != 0) table[packed++] = table[slot];
    }
    *bucket_count = used;
    return table;
}

static uint8_t mean(const bucket *entry, int channel) { return (uint8_t)((entry->sum[channel] + entry->count / 2) / entry->count); }

/// Which channel of a box holds the most squared error about its mean (weighted by pixels), and
/// that error: the box that holds most is split next, along that channel.
static void measure(const bucket *buckets, box *target) {
    double sums[4] = {0, 0, 0, 0}, squares[4] = {0, 0, 0, 0};
    target->pixels = 0;
    for (size_t i = target->first; i < target->first + target->count; i++) {
        target->pixels += buckets[i].count;
        for (int c = 0; c < 4; c++) {
            double value = mean(&buckets[i], c);
            sums[c] += value * buckets[i].count;
            squares[c] += value * value * buckets[i].count;
        }
    }
    target->error = 0;
    target->channel = 0;
    for (int c = 0; c < 4; c++) {
        double error = squares[c] - sums[c] * sums[c] / (double)target->pixels;
        if (error > target->error) {
            target->error = error;
            target->channel = c;
        }
    }
}

static int by_order(const void *left, const void *right) {
    return (int)((const bucket *)left)->order - (int)((const bucket *)right)->order;
}

/// Median cut: splits the box holding the most squared error at the pixel median along its
/// channel of most error, until there are `limit` boxes or none can be split.
static int median_cut(bucket *buckets, size_t bucket_count, int limit, box *boxes) {
    int count = 1;
    boxes[0] = (box){0, bucket_count, 0, 0, 0};
    measure(buckets, &boxes[0]);
    while (count < limit) {
        int chosen = -1;
        double largest = 0;
        for (int i = 0; i < count; i++) {
            if (boxes[i].count > 1 && boxes[i].error > largest) {
                largest = boxes[i].error;
                chosen = i;
            }
        }
        if (chosen < 0) break;
        box *target = &boxes[chosen];
        for (size_t i = target->first; i < target->first + target->count; i++) buckets[i].order = mean(&buckets[i], target->channel);
        qsort(buckets + target->first, target->count, sizeof(bucket), by_order);
        uint64_t half = target->pixels / 2, seen = 0;
        size_t split = target->first;
        while (split < target->first + target->count - 1 && seen + buckets[split].count <= half) seen += buckets[split++].count;
        if (split == target->first) split += 1;
        box upper = {split, target->first + target->count - split, 0, 0, 0};
        target->count = split - target->first;
        measure(buckets, target);
        measure(buckets, &upper);
        boxes[count++] = upper;
    }
    return count;
}

static uint32_t distance(const int *color, const uint8_t *entry) {
    int dr = color[0] - entry[0], dg = color[1] - entry[1], db = color[2] - entry[2], da = color[3] - entry[3];
    return (uint32_t)(dr * dr + dg * dg + db * db + da * da);
}

static uint8_t nearest(const int *color, const uint8_t *palette, int colors) {
    uint8_t best = 0;
    uint32_t lowest = UINT32_MAX;
    for (int i = 0; i < colors; i++) {
        uint32_t d = distance(color, palette + i * 4);
        if (d < lowest) {
            lowest = d;
            best = (uint8_t)i;
        }
    }
    return best;
}

static int clamp(int value) { return value < 0 ? 0 : value > 255 ? 255 : value; }

/// Maps every pixel to its palette entry with Floyd-Steinberg error diffusion; the nearest entry
/// of each reduced colour is looked up once and remembered.
static int map_dithered(const uint8_t *rgba, uint32_t width, uint32_t height, const uint8_t *palette, int colors, uint8_t *indexes) {
    uint16_t *memo = malloc((size_t)(1u << 19) * sizeof(uint16_t));
    int *errors = calloc((size_t)(width + 2) * 2 * 4, sizeof(int));
    if (memo == NULL || errors == NULL) {
        free(memo);
        free(errors);
        return -1;
    }
    memset(memo, 0xFF, (size_t)(1u << 19) * sizeof(uint16_t));
    for (uint32_t y = 0; y < height; y++) {
        int *current = errors + (size_t)(y % 2) * (width + 2) * 4 + 4;
        int *next = errors + (size_t)((y + 1) % 2) * (width + 2) * 4 + 4;
        memset(next - 4, 0, (size_t)(width + 2) * 4 * sizeof(int));
        for (uint32_t x = 0; x < width; x++) {
            const uint8_t *pixel = rgba + ((size_t)y * width + x) * 4;
            int color[4];
            uint8_t reduced[4];
            for (int c = 0; c < 4; c++) {
                color[c] = clamp(pixel[c] + current[x * 4 + c] / 16);
                reduced[c] = (uint8_t)color[c];
            }
            uint32_t key = reduced_key(reduced);
            if (memo[key] == 0xFFFF) memo[key] = nearest(color, palette, colors);
            uint8_t index = (uint8_t)memo[key];
            indexes[(size_t)y * width + x] = index;
            for (int c = 0; c < 4; c++) {
                int error = color[c] - palette[index * 4 + c];
                current[(x + 1) * 4 + c] += error * 7;
                next[((int)x - 1) * 4 + c] += error * 3;
                next[x * 4 + c] += error * 5;
                next[(x + 1) * 4 + c] += error;
            }
        }
    }
    free(memo);
    free(errors);
    return 0;
}

int cwi_quantize(const uint8_t *rgba, uint32_t width, uint32_t height, int32_t limit, uint8_t *indexes, uint8_t *palette) {
    size_t count = (size_t)width * height;
    if (count == 0 || limit < 2 || limit > 256) return -1;
    int found = exact_colors(rgba, count, limit, indexes, palette);
    if (found > 0) return found;
    size_t bucket_count = 0;
    bucket *buckets = histogram(rgba, count, &bucket_count);
    box *boxes = malloc(sizeof(box) * 256);
    if (buckets == NULL || boxes == NULL) {
        free(buckets);
        free(boxes);
        return -1;
    }
    int colors = median_cut(buckets, bucket_count, limit, boxes);
    for (int i = 0; i < colors; i++) {
        uint64_t sum[4] = {0, 0, 0, 0}, pixels = boxes[i].pixels;
        for (size_t b = boxes[i].first; b < boxes[i].first + boxes[i].count; b++) {
            for (int c = 0; c < 4; c++) sum[c] += buckets[b].sum[c];
        }
        for (int c = 0; c < 4; c++) palette[i * 4 + c] = (uint8_t)((sum[c] + pixels / 2) / pixels);
    }
    free(buckets);
    free(boxes);
    return map_dithered(rgba, width, height, palette, colors, indexes) == 0 ? colors : -1;
}
