// The codec floor under serve.py's JPEG and WebP rows: the codec work of our server's path for
// those rows and nothing else, for SECONDS on one core. Each round decodes the JPEG source with
// libjpeg-turbo straight to its Y, Cb and Cr planes at the DCT step the path takes (the smallest
// of 1/8, 1/4, 1/2 and 1 whose output covers the fit into 512x512: 1/4 for a 2048x1365 photo),
// then encodes the result-sized top-left of those planes at QUALITY: as a 4:2:0 JPEG with
// TurboJPEG (FORMAT jpg), or as a lossy WebP with Debian's libwebp from the YUV planes, its
// default preset at method 4 (FORMAT webp: imgproxy's and libvips' effort), after mapping the
// planes from JPEG's full range to the studio range libwebp takes, as our path does (so that both
// encode the same picture). No resampling and no HTTP: what a server on these libraries spends
// on the request at least.
// Prints {"operations", "seconds", "bytes"} (bytes: the last result's size).
// Built by scripts/compare/serve.py: cc -O2 format_floor.c -lturbojpeg -lwebp.
// Usage: format_floor PATH jpg|webp QUALITY SECONDS
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <turbojpeg.h>
#include <webp/encode.h>

#include "read_file.h"

#define BOX 512

static double now(void) {
    struct timespec clock;
    clock_gettime(CLOCK_MONOTONIC, &clock);
    return clock.tv_sec + clock.tv_nsec / 1e9;
}

// The result of fitting width x height into BOX x BOX, and the smallest SIMD DCT step covering it.
static void plan(int width, int height, int *result_width, int *result_height, int *numerator) {
    double scale = (double)BOX / (width > height ? width : height);
    *result_width = (int)(width * scale + 0.5);
    *result_height = (int)(height * scale + 0.5);
    static const int steps[] = {1, 2, 4, 8};
    for (int index = 0; index < 4; index++) {
        *numerator = steps[index];
        if ((width * steps[index] + 7) / 8 >= *result_width && (height * steps[index] + 7) / 8 >= *result_height) return;
    }
}

// The window of each plane mapped in place from full range to studio range: luma 16 + Y x 219/255,
// chroma 128 + (C - 128) x 224/255, rounded.
static void studio_range(unsigned char **planes, int *strides, int width, int height) {
    unsigned char luma[256], chroma[256];
    for (int sample = 0; sample < 256; sample++) {
        luma[sample] = (unsigned char)(16 + (sample * 219 * 2 + 255) / 510);
        int centred = (sample - 128) * 224 * 2;
        chroma[sample] = (unsigned char)(128 + (centred >= 0 ? (centred + 255) / 510 : -((-centred + 255) / 510)));
    }
    for (int index = 0; index < 3; index++) {
        int columns = index ? (width + 1) / 2 : width, rows = index ? (height + 1) / 2 : height;
        const unsigned char *table = index ? chroma : luma;
        for (int row = 0; row < rows; row++) {
            unsigned char *line = planes[index] + (size_t)row * strides[index];
            for (int column = 0; column < columns; column++) line[column] = table[line[column]];
        }
    }
}

static size_t encode_webp(unsigned char **planes, int *strides, int width, int height, float quality) {
    WebPConfig config;
    WebPPicture picture;
    WebPMemoryWriter writer;
    if (!WebPConfigPreset(&config, WEBP_PRESET_DEFAULT, quality) || !WebPPictureInit(&picture)) exit(1);
    config.method = 4;
    WebPMemoryWriterInit(&writer);
    picture.use_argb = 0;
    picture.colorspace = WEBP_YUV420;
    picture.width = width;
    picture.height = height;
    picture.y = planes[0];
    picture.u = planes[1];
    picture.v = planes[2];
    picture.y_stride = strides[0];
    picture.uv_stride = strides[1];
    picture.writer = WebPMemoryWrite;
    picture.custom_ptr = &writer;
    if (!WebPEncode(&config, &picture)) exit(1);
    size_t size = writer.size;
    WebPMemoryWriterClear(&writer);
    WebPPictureFree(&picture);
    return size;
}

int main(int argc, char **argv) {
    if (argc != 5) return 2;
    int webp = strcmp(argv[2], "webp") == 0, quality = atoi(argv[3]);
    double seconds = atof(argv[4]);
    size_t size;
    unsigned char *data = read_file(argv[1], &size);
    tjhandle decompressor = tjInitDecompress(), compressor = tjInitCompress();
    int width, height, subsampling, colorspace;
    if (tjDecompressHeader3(decompressor, data, size, &width, &height, &subsampling, &colorspace) || subsampling != TJSAMP_420) return 1;
    int result_width, result_height, numerator;
    plan(width, height, &result_width, &result_height, &numerator);
    int decoded_width = (width * numerator + 7) / 8, decoded_height = (height * numerator + 7) / 8;
    unsigned char *planes[3];
    int strides[3];
    for (int index = 0; index < 3; index++) {
        strides[index] = tjPlaneWidth(index, decoded_width, TJSAMP_420);
        planes[index] = malloc((size_t)strides[index] * tjPlaneHeight(index, decoded_height, TJSAMP_420));
    }
    long operations = 0;
    size_t bytes = 0;
    double start = now();
    do {
        if (tjDecompressToYUVPlanes(decompressor, data, size, planes, decoded_width, strides, decoded_height, 0)) return 1;
        if (webp) {
            studio_range(planes, strides, result_width, result_height);
            bytes = encode_webp(planes, strides, result_width, result_height, (float)quality);
        } else {
            unsigned char *output = NULL;
            unsigned long length = 0;
            if (tjCompressFromYUVPlanes(compressor, (const unsigned char **)planes, result_width, strides, result_height, TJSAMP_420,
                                        &output, &length, quality, 0))
                return 1;
            bytes = length;
            tjFree(output);
        }
        operations++;
    } while (now() - start < seconds);
    printf("{\"operations\": %ld, \"seconds\": %f, \"bytes\": %zu}\n", operations, now() - start, bytes);
    return 0;
}
