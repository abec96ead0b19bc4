// Reversing PNG's row filters sixteen rows at a time (the direct path's unfiltering of 8-bit RGB
// and RGBA rows).
//
// Row by row, Paeth (most rows of a photograph) is a chain: each sample needs the one just made to
// its left, so a row is as slow as that chain of compares and selects, about 1.4 ns a byte here.
// Rows are independent in the other direction once the row above is known, which gives a
// wavefront: at step t, row r of a band works on pixel t - r, so that the sample above it (row
// r - 1, pixel t - r) was made one step before and the one above-left two steps before. The
// sixteen rows of a band are the sixteen lanes of a vector, each lane with its own filter type,
// and every step is one pixel of sixteen rows: about twice as fast on a photograph, the same bytes.
#include "CWebImageCodecs.h"

#include <string.h>

#if defined(__x86_64__)
#include <immintrin.h>

#define CWI_BAND 16

/// The band's rows (`count`, at most 16, each behind its filter-type byte, `stride` apart from
/// `band`) unfiltered, `prior` being the unfiltered row above the first (NULL: none). `bpp` 3 or
/// 4. With 3 it reads (and writes back unchanged) one byte past each pixel, so the buffer needs
/// one byte after the last row.
__attribute__((target("avx2"))) static void unfilter_band(uint8_t *band, size_t stride, uint32_t count, const uint8_t *prior,
                                                          uint32_t width, uint32_t bpp) {
    // Per lane, the row's filter as a mask. With no row above, Up is None and Paeth is Sub
    // (their missing samples are zero), and Average averages with zero, as the vectors do.
    int16_t masks[4][CWI_BAND] = {{0}};
    for (uint32_t r = 0; r < count; r++) {
        uint8_t filter = band[(size_t)r * stride];
        if (filter >= 1 && filter <= 4) masks[filter - 1][r] = -1;
    }
    const __m256i sub = _mm256_loadu_si256((const void *)masks[0]), up = _mm256_loadu_si256((const void *)masks[1]),
                  average = _mm256_loadu_si256((const void *)masks[2]), paeth = _mm256_loadu_si256((const void *)masks[3]);
    const __m256i lanes = _mm256_setr_epi16(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    const __m256i bytes = _mm256_set1_epi32(255), all = _mm256_set1_epi16(-1);
    // Lane r reads row r at pixel t - r: `r x (stride - bpp)` past pixel t of the first row.
    const __m256i step = _mm256_set1_epi32((int)(stride - bpp));
    const __m256i low_offsets = _mm256_mullo_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), step);
    const __m256i high_offsets = _mm256_mullo_epi32(_mm256_setr_epi32(8, 9, 10, 11, 12, 13, 14, 15), step);
    // Per channel: each lane's last output (its next `left`) and last `above` (its next upper-left).
    __m256i left[4], above[4];
    for (int k = 0; k < 4; k++) left[k] = above[k] = _mm256_setzero_si256();
    uint8_t *first = band + 1;
    long steps = (long)width + count - 1;
    for (long t = 0; t < steps; t++) {
        int full = t >= CWI_BAND - 1 && t < (long)width && count == CWI_BAND;
        __m256i low_valid = _mm256_set1_epi32(-1), high_valid = low_valid;
        if (!full) {
            int32_t valid[CWI_BAND] __attribute__((aligned(32)));
            for (uint32_t r = 0; r < CWI_BAND; r++) valid[r] = r < count && t - (long)r >= 0 && t - (long)r < (long)width ? -1 : 0;
            low_valid = _mm256_load_si256((const void *)valid);
            high_valid = _mm256_load_si256((const void *)(valid + 8));
        }
        const int *at = (const int *)(first + (size_t)t * bpp);
        __m256i low = _mm256_mask_i32gather_epi32(_mm256_setzero_si256(), at, low_offsets, low_valid, 1);
        __m256i high = _mm256_mask_i32gather_epi32(_mm256_setzero_si256(), at, high_offsets, high_valid, 1);
        // A lane at its row's first pixel has nothing to its left or above-left.
        __m256i starting = t < CWI_BAND ? _mm256_cmpeq_epi16(lanes, _mm256_set1_epi16((short)t)) : _mm256_setzero_si256();
        __m256i low_out = bpp == 3 ? _mm256_andnot_si256(_mm256_set1_epi32(0x00FFFFFF), low) : _mm256_setzero_si256();
        __m256i high_out = bpp == 3 ? _mm256_andnot_si256(_mm256_set1_epi32(0x00FFFFFF), high) : _mm256_setzero_si256();
        for (uint32_t k = 0; k < bpp; k++) {
            __m256i raw = _mm256_permute4x64_epi64(
                _mm256_packus_epi32(_mm256_and_si256(_mm256_srli_epi32(low, 8 * k), bytes), _mm256_and_si256(_mm256_srli_epi32(high, 8 * k), bytes)),
                0xD8);
            // Above: the lane before's previous output; for the first row, the prior row's sample.
            __m256i b = _mm256_alignr_epi8(left[k], _mm256_permute2x128_si256(left[k], left[k], 0x08), 14);
            b = _mm256_insert_epi16(b, prior != NULL && t < (long)width ? prior[(size_t)t * bpp + k] : 0, 0);
            __m256i a = _mm256_andnot_si256(starting, left[k]);
            __m256i c = _mm256_andnot_si256(starting, above[k]);
            __m256i to_left = _mm256_abs_epi16(_mm256_sub_epi16(b, c));
            __m256i from_upper_left = _mm256_sub_epi16(a, c);
            __m256i to_above = _mm256_abs_epi16(from_upper_left);
            __m256i to_upper_left = _mm256_abs_epi16(_mm256_add_epi16(from_upper_left, _mm256_sub_epi16(b, c)));
            __m256i takes_left = _mm256_andnot_si256(_mm256_or_si256(_mm256_cmpgt_epi16(to_left, to_above), _mm256_cmpgt_epi16(to_left, to_upper_left)), all);
            __m256i takes_above = _mm256_andnot_si256(_mm256_cmpgt_epi16(to_above, to_upper_left), all);
            __m256i predicted = _mm256_blendv_epi8(_mm256_blendv_epi8(c, b, takes_above), a, takes_left);
            __m256i prediction = _mm256_or_si256(_mm256_or_si256(_mm256_and_si256(sub, a), _mm256_and_si256(up, b)),
                                                 _mm256_or_si256(_mm256_and_si256(average, _mm256_srli_epi16(_mm256_add_epi16(a, b), 1)),
                                                                 _mm256_and_si256(paeth, predicted)));
            __m256i value = _mm256_and_si256(_mm256_add_epi16(raw, prediction), _mm256_set1_epi16(255));
            left[k] = value;
            above[k] = b;
            __m256i ordered = _mm256_permute4x64_epi64(value, 0xD8);
            low_out = _mm256_or_si256(low_out, _mm256_slli_epi32(_mm256_unpacklo_epi16(ordered, _mm256_setzero_si256()), 8 * k));
            high_out = _mm256_or_si256(high_out, _mm256_slli_epi32(_mm256_unpackhi_epi16(ordered, _mm256_setzero_si256()), 8 * k));
        }
        int32_t out[CWI_BAND] __attribute__((aligned(32)));
        _mm256_store_si256((void *)out, low_out);
        _mm256_store_si256((void *)(out + 8), high_out);
        uint8_t *target = first + (size_t)t * bpp;
        for (uint32_t r = 0; r < count; r++) {
            if (full || (t - (long)r >= 0 && t - (long)r < (long)width)) memcpy(target + (size_t)r * (stride - bpp), &out[r], 4);
        }
    }
}

uint32_t cwi_png_unfilter_band(uint8_t *rows, size_t stride, uint32_t count, const uint8_t *prior, uint32_t width, uint32_t bpp) {
    if ((bpp != 3 && bpp != 4) || count == 0 || width == 0 || !__builtin_cpu_supports("avx2")) return 0;
    uint32_t band = count < CWI_BAND ? count : CWI_BAND;
    unfilter_band(rows, stride, band, prior, width, bpp);
    return band;
}

/// Sub is a running sum per channel. Four pixels at a time: each pixel plus the one before it,
/// then plus the pair before those (two shifted adds make the sums within the four), then plus
/// the last pixel made, repeated in every pixel's place. Row by row this is a chain of one add a
/// byte; here it is five vector operations every four pixels.
__attribute__((target("avx2"))) static void unsub(uint8_t *row, size_t length, uint32_t bpp) {
    size_t i = 0;
    if (bpp == 4) {
        __m128i carry = _mm_setzero_si128();
        for (; i + 16 <= length; i += 16) {
            __m128i x = _mm_loadu_si128((const void *)(row + i));
            x = _mm_add_epi8(x, _mm_slli_si128(x, 4));
            x = _mm_add_epi8(x, _mm_slli_si128(x, 8));
            x = _mm_add_epi8(x, carry);
            _mm_storeu_si128((void *)(row + i), x);
            carry = _mm_shuffle_epi32(x, 0xFF);
        }
    } else {
        // Twelve bytes (four pixels) a step, read as sixteen and written as twelve: a sixteen-byte
        // store would overlap the next step's load, which then waits for it (twice as slow).
        const __m128i last_pixel = _mm_setr_epi8(9, 10, 11, 9, 10, 11, 9, 10, 11, 9, 10, 11, -1, -1, -1, -1);
        __m128i carry = _mm_setzero_si128();
        for (; i + 16 <= length; i += 12) {
            __m128i x = _mm_loadu_si128((const void *)(row + i));
            x = _mm_add_epi8(x, _mm_slli_si128(x, 3));
            x = _mm_add_epi8(x, _mm_slli_si128(x, 6));
            x = _mm_add_epi8(x, carry);
            _mm_storel_epi64((void *)(row + i), x);
            int32_t third = _mm_cvtsi128_si32(_mm_srli_si128(x, 8));
            memcpy(row + i + 8, &third, 4);
            carry = _mm_shuffle_epi8(x, last_pixel);
        }
    }
    for (i = i < bpp ? bpp : i; i < length; i++) row[i] = (uint8_t)(row[i] + row[i - bpp]);
}

int32_t cwi_png_unsub(uint8_t *row, size_t length, uint32_t bpp) {
    if ((bpp != 3 && bpp != 4) || !__builtin_cpu_supports("avx2")) return 0;
    unsub(row, length, bpp);
    return 1;
}
#else
uint32_t cwi_png_unfilter_band(uint8_t *rows, size_t stride, uint32_t count, const uint8_t *prior, uint32_t width, uint32_t bpp) {
    (void)rows, (void)stride, (void)count, (void)prior, (void)width, (void)bpp;
    return 0;
}

int32_t cwi_png_unsub(uint8_t *row, size_t length, uint32_t bpp) {
    (void)row, (void)length, (void)bpp;
    return 0;
}
#endif
