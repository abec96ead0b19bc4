// The floor under the `decode-heic` and `decode-jxl` comparisons: the system codec alone, called
// from C the way the coders call it, decoding the file ROUNDS times to 8-bit RGBA in a fresh buffer
// each time (what a decoder that hands its pixels away must do). Prints {"operations": megapixels,
// "seconds": ...}. Built by scripts/compare/run.py: cc -O2 codec_floor.c -lheif -ljxl.
// Usage: codec_floor heif|jxl PATH ROUNDS
#include <jxl/decode.h>
#include <libheif/heif.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "read_file.h"

static double decode_heif(const unsigned char *data, size_t size) {
    struct heif_context *context = heif_context_alloc();
    struct heif_image_handle *handle = NULL;
    struct heif_image *image = NULL;
    if (heif_context_read_from_memory_without_copy(context, data, size, NULL).code ||
        heif_context_get_primary_image_handle(context, &handle).code ||
        heif_decode_image(handle, &image, heif_colorspace_RGB, heif_chroma_interleaved_RGBA, NULL).code) exit(1);
    int width = heif_image_get_width(image, heif_channel_interleaved), height = heif_image_get_height(image, heif_channel_interleaved);
    int stride = 0;
    const uint8_t *plane = heif_image_get_plane_readonly(image, heif_channel_interleaved, &stride);
    unsigned char *pixels = malloc((size_t)width * height * 4);
    for (int y = 0; y < height; y++) memcpy(pixels + (size_t)y * width * 4, plane + (size_t)y * stride, (size_t)width * 4);
    free(pixels);
    heif_image_release(image);
    heif_image_handle_release(handle);
    heif_context_free(context);
    return width * (double)height;
}

static double decode_jxl(const unsigned char *data, size_t size) {
    JxlDecoder *decoder = JxlDecoderCreate(NULL);
    JxlDecoderSubscribeEvents(decoder, JXL_DEC_BASIC_INFO | JXL_DEC_FULL_IMAGE);
    JxlDecoderSetInput(decoder, data, size);
    JxlDecoderCloseInput(decoder);
    JxlPixelFormat format = {4, JXL_TYPE_UINT8, JXL_NATIVE_ENDIAN, 0};
    JxlBasicInfo info;
    unsigned char *pixels = NULL;
    for (;;) {
        JxlDecoderStatus status = JxlDecoderProcessInput(decoder);
        if (status == JXL_DEC_BASIC_INFO) {
            JxlDecoderGetBasicInfo(decoder, &info);
        } else if (status == JXL_DEC_NEED_IMAGE_OUT_BUFFER) {
            size_t bytes = 0;
            JxlDecoderImageOutBufferSize(decoder, &format, &bytes);
            pixels = malloc(bytes);
            JxlDecoderSetImageOutBuffer(decoder, &format, pixels, bytes);
        } else if (status == JXL_DEC_FULL_IMAGE || status == JXL_DEC_SUCCESS) {
            break;
        } else {
            exit(1);
        }
    }
    free(pixels);
    JxlDecoderDestroy(decoder);
    return info.xsize * (double)info.ysize;
}

int main(int argc, char **argv) {
    if (argc != 4) return 2;
    size_t size = 0;
    unsigned char *data = read_file(argv[2], &size);
    int rounds = atoi(argv[3]);
    int heif = strcmp(argv[1], "heif") == 0;
    struct timespec start, end;
    clock_gettime(CLOCK_MONOTONIC, &start);
    double pixels = 0;
    for (int round = 0; round < rounds; round++) pixels += heif ? decode_heif(data, size) : decode_jxl(data, size);
    clock_gettime(CLOCK_MONOTONIC, &end);
    printf("{\"operations\": %f, \"seconds\": %f}\n", pixels / 1e6, (end.tv_sec - start.tv_sec) + (end.tv_nsec - start.tv_nsec) / 1e9);
    free(data);
    return 0;
}
