#ifndef CWEBIMAGECODECS_H
#define CWEBIMAGECODECS_H

#include <stddef.h>
#include <stdint.h>

/// The header facts of an image, read without decoding any pixels.
typedef struct {
    uint32_t width;
    uint32_t height;
    /// Channels in the stored data (1 gray, 3 RGB/YCbCr, 4 CMYK/YCCK or RGBA).
    uint32_t components;
    /// JPEG: 1 when the file is progressive. PNG: 1 when it is Adam7 interlaced.
    int32_t progressive;
    /// PNG only: the bit depth; JPEG: 8.
    int32_t bit_depth;
    /// A short reason when the call failed; empty on success.
    char message[200];
} cwi_header_info;

/// Reads a JPEG header with classic libjpeg. Errors long-jump back here instead of calling
/// exit(), and warnings are not printed. Returns 0 on success, -1 on a corrupt or truncated header.
int cwi_jpeg_read_header(const uint8_t *data, size_t size, cwi_header_info *info);

/// Reads a PNG header (IHDR) with classic libpng, setjmp-protected and silent.
/// Returns 0 on success, -1 on failure.
int cwi_png_read_header(const uint8_t *data, size_t size, cwi_header_info *info);

/// What a PNG decode found besides the pixels.
typedef struct {
    /// 1 when the file has an alpha channel or tRNS.
    int32_t has_alpha;
    /// 1 when the data ended before the image did and the rows decoded so far were kept.
    int32_t partial;
    /// 1 when the direct path (libdeflate, no libpng transforms) decoded the rows.
    int32_t direct;
    /// A short reason when the call failed; empty on success.
    char message[200];
    /// What libpng warned about and worked around (a CRC error in an ancillary chunk, which is
    /// dropped; a benign error such as an iCCP chunk it cannot read), "; "-separated.
    char warnings[400];
} cwi_png_outcome;

/// Decodes a PNG of `width` x `height` (read first with cwi_png_read_header) into `out`, zeroed by
/// the caller, as straight RGBA: every colour type and bit depth, palette and tRNS expanded,
/// 16-bit samples scaled to 8 bits with rounding, Adam7 deinterlaced, no gamma applied. Damaged
/// ancillary chunks are dropped with a warning; critical ones fail. With `accept_truncated`,
/// data that ends before the image does keeps the rows decoded (the rest stays transparent) and
/// sets `partial`.
///
/// `reduction` above 1 reduces by that whole factor while reading: `out` then holds
/// ceil(width / reduction) x ceil(height / reduction) pixels, each the average of its block
/// (colour weighted by alpha), and only one source row is held at a time; an interlaced file is
/// decoded whole first (Adam7 revisits every row), then reduced the same way. `out` holds exactly
/// the output's pixels x 4 bytes (x 8 at 16 bits).
/// With `allow_direct`, a file of 8-bit samples (or 16-bit RGB or RGBA), not interlaced, about
/// whose chunks before the image data libpng said nothing, has its image data inflated at once by
/// libdeflate and its rows unfiltered and expanded without libpng's transforms (the same bytes,
/// about twice as fast); any doubt about the data hands it back to libpng (see PNGRows.h).
/// `sample_bits` 16 (the direct path for 16-bit RGB and RGBA files only; reduced only when not
/// interlaced) widens every depth to 16-bit RGBA in the machine's byte order, 8 bytes a pixel in
/// `out`, for an HDR file's tone mapping or a high bit depth kept; 8 is the 8-bit RGBA above.
/// Returns 0 on success, -1 with a reason in the outcome's message.
int cwi_png_decode_rgba(const uint8_t *data, size_t size, uint8_t *out, size_t out_size,
                        uint32_t width, uint32_t height, uint32_t reduction, int32_t accept_truncated,
                        int32_t allow_direct, int32_t sample_bits, cwi_png_outcome *outcome);

/// The direct path's unfiltering of 8-bit RGB (`bpp` 3) and RGBA (`bpp` 4) rows, sixteen at once
/// (a wavefront: row r of the band works on pixel t - r at step t, one vector lane a row), on
/// x86-64 with AVX2. `rows` is the first row's filter-type byte, the next row's `stride` bytes on;
/// of `count` rows it unfilters the first min(count, 16) in place and returns how many, or 0 when
/// it does none (another `bpp`, no AVX2: the caller unfilters row by row). `prior` is the
/// unfiltered row above the first, or NULL for an image's first row. Filter types above 4 count
/// as None: the caller rejects them first. With `bpp` 3 it reads, and writes back unchanged, one
/// byte past the last pixel of each row, so one byte must be readable after the last row.
uint32_t cwi_png_unfilter_band(uint8_t *rows, size_t stride, uint32_t count, const uint8_t *prior, uint32_t width, uint32_t bpp);

/// Reverses the Sub filter on one row of `length` bytes of 8-bit RGB (`bpp` 3) or RGBA (`bpp` 4)
/// pixels in place with vectors (prefix sums of four pixels at a time), on x86-64 with AVX2.
/// Returns 1, or 0 when it does nothing (another `bpp`, no AVX2: the caller's loop does it).
int32_t cwi_png_unsub(uint8_t *row, size_t length, uint32_t bpp);

/// How cwi_png_compress_image writes.
typedef struct {
    /// The deflate level, 0 (stored) to 9 (libdeflate's scale, zlib-like; 6 is the peers' default).
    int32_t level;
    /// 1: Adam7 interlaced.
    int32_t interlaced;
    /// 1: the pixels are palette indexes.
    int32_t palette;
} cwi_png_write_options;

/// A PNG's image data, the zlib stream its IDAT chunks carry, for `width` x `height` pixels:
/// straight RGBA (`channels` 4), RGB (3), grey and alpha (2) or grey (1) at `bit_depth` 8 or 16
/// (big-endian samples, as the file stores them), each row filtered with the filter whose output
/// has the smallest sum of absolute values (libpng's adaptive heuristic); or, with
/// `options.palette`, palette indexes (`channels` 1, one byte per pixel, packed to `bit_depth` 1,
/// 2, 4 or 8), unfiltered. On success returns 0 and a malloc'd buffer in `*out` (free it with
/// cwi_png_free); -1 without memory or with bad arguments.
int cwi_png_compress_image(const uint8_t *pixels, uint32_t width, uint32_t height, int32_t channels, int32_t bit_depth,
                           cwi_png_write_options options, uint8_t **out, size_t *out_size);

/// Frees what cwi_png_compress_image returned.
void cwi_png_free(uint8_t *buffer);

/// Reduces `width` x `height` straight RGBA pixels to a palette of at most `limit` (2 to 256)
/// RGBA entries, written to `palette` (room for 256 x 4 bytes), and one index per pixel in
/// `indexes`. An image with at most `limit` colours keeps them exactly; otherwise median cut and
/// Floyd-Steinberg dithering (see Quantize.c). Returns the palette's size, or -1 without memory.
int cwi_quantize(const uint8_t *rgba, uint32_t width, uint32_t height, int32_t limit, uint8_t *indexes, uint8_t *palette);

/// The pixels a stream has decoded so far: width * height * 4 bytes, rows not yet decoded zero.
typedef struct {
    uint8_t *pixels;
    uint32_t width;
    uint32_t height;
    /// Rows complete, top down (a single scan or a non-interlaced PNG).
    uint32_t rows;
    /// Progressive JPEG: the scans drawn. Interlaced PNG: the Adam7 passes complete.
    int32_t passes;
    /// JPEG only: the pixels are CMYK (YCCK converted), four bytes of ink, for the caller to convert.
    int32_t is_cmyk;
} cwi_stream_image;

typedef cwi_stream_image cwi_png_image;
typedef cwi_stream_image cwi_jpeg_image;

/// libpng's progressive reader kept across a download: feed each piece as it arrives and read
/// the straight RGBA rows decoded so far (transformed as cwi_png_decode_rgba does).
typedef struct cwi_png_stream cwi_png_stream;

/// A stream for a PNG of `width` x `height` (from cwi_png_read_header), or NULL without memory.
cwi_png_stream *cwi_png_stream_create(uint32_t width, uint32_t height);

/// Feeds the next bytes. Returns 1 when new rows or passes are complete, 0 when not, -1 once the
/// data is found corrupt (every later call returns -1).
int cwi_png_stream_feed(cwi_png_stream *stream, const uint8_t *data, size_t size);

/// What the stream has decoded; valid until the next feed or destroy.
const cwi_png_image *cwi_png_stream_image(const cwi_png_stream *stream);

void cwi_png_stream_destroy(cwi_png_stream *stream);

/// libjpeg kept across a download with a suspending data source: a single-scan JPEG gives rows
/// as their data arrives; a file with several scans runs in buffered-image mode, absorbing each
/// scan once and drawing the newest complete one. At most 500 scans.
typedef struct cwi_jpeg_stream cwi_jpeg_stream;

/// A stream decoding at `scale_numerator` / `scale_denominator` (a TurboJPEG scaling factor) in
/// the DCT, or NULL without memory.
cwi_jpeg_stream *cwi_jpeg_stream_create(uint32_t scale_numerator, uint32_t scale_denominator);

/// Feeds the next bytes (the stream keeps its own copy). Returns 1 when new rows or a new scan
/// are drawn, 0 when not, -1 once the data is found corrupt (the reason in cwi_jpeg_stream_message).
int cwi_jpeg_stream_feed(cwi_jpeg_stream *stream, const uint8_t *data, size_t size);

/// What the stream has drawn (pixels NULL before the header); valid until the next feed or destroy.
const cwi_jpeg_image *cwi_jpeg_stream_image(const cwi_jpeg_stream *stream);

/// Why the stream failed.
const char *cwi_jpeg_stream_message(const cwi_jpeg_stream *stream);

/// The blocks of a JPEG's planes to decode, in iMCUs (max_h_samp_factor x max_v_samp_factor
/// blocks of 8x8 source pixels), first and last included.
typedef struct {
    uint32_t first_column;
    uint32_t last_column;
    uint32_t first_row;
    uint32_t last_row;
} cwi_jpeg_window;

/// Decodes a three-component YCbCr JPEG (4:4:4, 4:2:2 or 4:2:0) at `scale_numerator`/8 in the
/// DCT straight into its Y, Cb and Cr planes, chroma kept subsampled, and only the blocks inside
/// `window`: the iMCU rows above it are entropy-decoded but not transformed, those below it not
/// read at all, the columns beside it not transformed. Plane c's first sample is the window's
/// top-left; it holds whole scaled blocks (`(last_column - first_column + 1) * h_samp[c]` of them
/// across, `(last_row - first_row + 1) * v_samp[c]` down), `lengths[c]` bytes in rows
/// `strides[c]` apart. At most 500 scans. A baseline file's entropy-coded data is decoded by
/// our own Huffman decoder (JPEGEntropy.c: the same coefficients, faster), unless `flags` has
/// CWI_JPEG_LIBJPEG_ENTROPY.
/// Returns 0 when decoded; 1 when the file has several scans and `window` is not the whole
/// image (decode it whole: such a file's coefficients are all read first anyway); 2 when
/// decoded but libjpeg warned of damage on the way; -1 when it cannot, the reason in `message`.
int cwi_jpeg_decode_planes(const uint8_t *data, size_t size, uint32_t scale_numerator, const cwi_jpeg_window *window,
                           uint8_t *const planes[3], const size_t strides[3], const size_t lengths[3], uint32_t flags,
                           char message[200]);

/// cwi_jpeg_decode_planes with libjpeg-turbo's own Huffman decoder: the reference ours is held to.
#define CWI_JPEG_LIBJPEG_ENTROPY 1u

void cwi_jpeg_stream_destroy(cwi_jpeg_stream *stream);

/// Separable resampling weights along one axis of a plane: output position i reads `counts[i]`
/// source samples from `starts[i]` (absolute), weighted by `weights[i * stride ...]`.
/// `source_count` is the number of source samples along the axis. `copies` (1) says that
/// position i is source sample `first_source + i` at weight 1 (a cut): the pass along that axis
/// is a copy (`first_source` is read only then).
typedef struct {
    const long *starts;
    const long *counts;
    const float *weights;
    long stride;
    long count;
    long first_source;
    long source_count;
    int copies;
} cwi_plane_weights;

/// Working memory of cwi_resample_plane, the caller's: `line` `columns->source_count` + 3 floats,
/// `sums` `columns->count` floats, `starts` `columns->count` longs and `weights`
/// `columns->count` x `columns->stride` rounded up to a multiple of four floats.
typedef struct {
    float *line;
    float *sums;
    long *starts;
    float *weights;
} cwi_plane_scratch;

/// Resamples one 8-bit plane into `output` (`columns->count` x `rows->count` samples): for each
/// output row, `rows` down each column into floats, then `columns` along that row, rounded once.
void cwi_resample_plane(const uint8_t *source, long source_stride, uint8_t *output, long output_stride,
                        const cwi_plane_weights *columns, const cwi_plane_weights *rows, cwi_plane_scratch scratch);

/// What a TIFF page declares: its size, TIFF orientation (1-8, the EXIF values), whether it has
/// an alpha channel, and the number of pages (directories) in the file.
typedef struct {
    uint32_t width;
    uint32_t height;
    uint16_t orientation;
    uint16_t has_alpha;
    uint32_t pages;
    /// Set by cwi_tiff_decode_page when the raster holds straight RGBA bytes (a page with
    /// unassociated alpha, read as stored) instead of libtiff's premultiplied RGBA.
    uint16_t straight;
    char message[200];
} cwi_tiff_info;

/// Reads page `page`'s header from an in-memory TIFF, silently. Returns 0, or -1 with a message.
int cwi_tiff_read_info(const uint8_t *data, size_t size, uint32_t page, cwi_tiff_info *info);

/// Decodes page `page` into `raster` (width × height RGBA, premultiplied when the page has alpha
/// unless `info->straight` says otherwise, rows as stored: the orientation is the caller's to
/// apply) through libtiff's RGBA interface (strips or tiles, 1-16 bits, palette, grey, CMYK,
/// YCbCr, every compression libtiff was built with), or through the sample reader where that
/// interface refuses the page (12- and 32-bit samples, floats, 16-bit CMYK) or would premultiply
/// an unassociated alpha. Returns 0, or -1 with a message.
int cwi_tiff_decode_page(const uint8_t *data, size_t size, uint32_t page, uint32_t *raster, uint32_t width, uint32_t height,
                         cwi_tiff_info *info);

/// The bits per sample of page `page` when the sample reader can keep them at 16 bits: unsigned
/// integer samples of up to 16 bits, grey, RGB or CMYK, alpha not associated; 0 otherwise.
int cwi_tiff_page_bits(const uint8_t *data, size_t size, uint32_t page);

/// Decodes page `page` (one cwi_tiff_page_bits accepts) into `pixels`, width × height straight
/// RGBA in native-endian 16-bit samples scaled from the full range of its depth, rows as stored.
/// Returns 0, or -1 with a message.
int cwi_tiff_decode_page16(const uint8_t *data, size_t size, uint32_t page, uint16_t *pixels, uint32_t width, uint32_t height,
                           cwi_tiff_info *info);

/// The first page's ICC profile (TIFFTAG_ICCPROFILE), copied into a buffer the caller frees with
/// free(), or NULL when there is none or the file is unreadable.
uint8_t *cwi_tiff_icc_profile(const uint8_t *data, size_t size, uint32_t *length);
/// A growable output buffer for cwi_tiff_encode; free its data with cwi_tiff_free.
typedef struct {
    uint8_t *data;
    size_t size;
    size_t capacity;
    size_t position;
} cwi_tiff_sink;

/// Writes `count` pages of width × height straight RGBA of `bits` (8, or 16: native-endian
/// `uint16_t` samples) a sample (RGB when `alpha` is 0) as a TIFF with deflate compression and
/// the horizontal predictor, each page with the ICC profile when one is given. Returns 0, or -1.
int cwi_tiff_encode(const uint8_t *const *pages, uint32_t count, uint32_t width, uint32_t height, int alpha, int bits,
                    const uint8_t *profile, uint32_t profile_length, cwi_tiff_sink *sink);

void cwi_tiff_free(cwi_tiff_sink *sink);

/// Keeps allocations up to `mmap_threshold` bytes in glibc's heap instead of a mapping of their
/// own each, and keeps up to `trim_threshold` free bytes at the heap's top: for a process that
/// decodes thousands of images of a few hundred KB a second, where every fresh mapping is
/// faulted in and zeroed again. Returns 0 when glibc took both settings.
int cwi_keep_large_allocations(int mmap_threshold, int trim_threshold);

#endif
