// Compiled only where FFmpeg's headers are: the package builds this target for the Video trait
// alone, but `swift build` compiles every target of the package, so without the headers this
// file is empty rather than an error.
#if __has_include(<libavformat/avformat.h>)
#include "CWebImageVideo.h"

#include <errno.h>
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/display.h>
#include <libavutil/error.h>
#include <libavutil/mastering_display_metadata.h>
#include <libavutil/pixdesc.h>
#include <math.h>
#include <libswscale/swscale.h>
#include <pthread.h>
#include <string.h>
#include <time.h>

/// The demuxers FFmpeg may pick: MP4/MOV (and 3GP) and Matroska/WebM, nothing else.
static const char *allowed_containers = "mov,mp4,m4a,3gp,3g2,mj2,matroska,webm";
static const int io_buffer_size = 32768;

struct wiv_video {
    const uint8_t *data;
    int64_t size;
    int64_t position;
    uint64_t deadline_ns;
    AVFormatContext *format;
    AVIOContext *io;
    AVCodecContext *codec;
    const char *codec_name;
    int stream;
    AVPacket *packet;
    /// What avcodec_receive_frame writes into (it empties it first, even at the end).
    AVFrame *frame;
    /// The last frame received: kept past the end of the stream, for "the last frame".
    AVFrame *current;
    struct SwsContext *scaler;
    int draining;
    /// HDR10's static metadata from the frames' side data (cd/m², 0 until a frame states it).
    int frame_content_light;
    int frame_display_luminance;
};

static uint64_t monotonic_ns(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}

static int has_timed_out(const wiv_video *video) { return monotonic_ns() > video->deadline_ns; }

/// FFmpeg's interrupt callback: a blocking read or a long analysis stops at the deadline.
static int interrupt(void *opaque) { return has_timed_out(opaque); }

static int read_bytes(void *opaque, uint8_t *buffer, int size) {
    wiv_video *video = opaque;
    if (video->position >= video->size) return AVERROR_EOF;
    int64_t count = video->size - video->position;
    if (count > size) count = size;
    memcpy(buffer, video->data + video->position, (size_t)count);
    video->position += count;
    return (int)count;
}

static int64_t seek_bytes(void *opaque, int64_t offset, int whence) {
    wiv_video *video = opaque;
    int64_t target;
    switch (whence & ~AVSEEK_FORCE) {
    case AVSEEK_SIZE: return video->size;
    case SEEK_SET: target = offset; break;
    case SEEK_CUR: target = video->position + offset; break;
    case SEEK_END: target = video->size + offset; break;
    default: return AVERROR(EINVAL);
    }
    if (target < 0 || target > video->size) return AVERROR(EINVAL);
    video->position = target;
    return target;
}

/// Every nested open (a QuickTime data reference, a Matroska linked segment) is refused: the
/// video is the caller's bytes and nothing else.
static int refuse_open(struct AVFormatContext *format, AVIOContext **pb, const char *url, int flags, AVDictionary **options) {
    (void)format; (void)pb; (void)url; (void)flags; (void)options;
    return AVERROR(EPERM);
}

static int fail(int code, const char *what, char *message, size_t message_size) {
    char reason[AV_ERROR_MAX_STRING_SIZE] = "";
    int ours = code <= WIV_TIMED_OUT && code >= WIV_NO_MEMORY;
    if (code < 0 && !ours) av_strerror(code, reason, sizeof reason);
    snprintf(message, message_size, "%s%s%s", what, reason[0] ? ": " : "", reason);
    return code;
}

/// The decoder for a stream, by name so that no hardware wrapper or experimental one is taken:
/// H.264, H.265, VP8, VP9 and AV1 (dav1d first, then libaom's and FFmpeg's own).
static const AVCodec *allowed_decoder(enum AVCodecID id) {
    static const char *av1[] = {"libdav1d", "libaom-av1", "av1", NULL};
    const char *single[2] = {NULL, NULL};
    const char **names = single;
    switch (id) {
    case AV_CODEC_ID_H264: single[0] = "h264"; break;
    case AV_CODEC_ID_HEVC: single[0] = "hevc"; break;
    case AV_CODEC_ID_VP8: single[0] = "vp8"; break;
    case AV_CODEC_ID_VP9: single[0] = "vp9"; break;
    case AV_CODEC_ID_AV1: names = av1; break;
    default: return NULL;
    }
    for (; *names; names++) {
        const AVCodec *codec = avcodec_find_decoder_by_name(*names);
        if (codec) return codec;
    }
    return NULL;
}

static int open_container(wiv_video *video, int64_t probe_size, int64_t max_analyze_duration, char *message, size_t message_size) {
    uint8_t *buffer = av_malloc(io_buffer_size);
    if (!buffer) return fail(WIV_NO_MEMORY, "no memory for the video's reader", message, message_size);
    video->io = avio_alloc_context(buffer, io_buffer_size, 0, video, read_bytes, NULL, seek_bytes);
    video->format = avformat_alloc_context();
    if (!video->io || !video->format) {
        if (!video->io) av_free(buffer);
        return fail(WIV_NO_MEMORY, "no memory for the video's reader", message, message_size);
    }
    video->format->pb = video->io;
    video->format->flags |= AVFMT_FLAG_CUSTOM_IO;
    video->format->interrupt_callback = (AVIOInterruptCB){.callback = interrupt, .opaque = video};
    video->format->io_open = refuse_open;
    video->format->max_streams = 32;
    if (probe_size > 0) video->format->probesize = probe_size;
    if (max_analyze_duration > 0) video->format->max_analyze_duration = max_analyze_duration;
    AVDictionary *options = NULL;
    av_dict_set(&options, "format_whitelist", allowed_containers, 0);
    int result = avformat_open_input(&video->format, NULL, NULL, &options);
    av_dict_free(&options);
    if (result < 0) {
        if (has_timed_out(video)) return fail(WIV_TIMED_OUT, "the video's container was not read in time", message, message_size);
        // The caller has recognised an MP4, QuickTime or WebM by its first bytes: a container that
        // does not open is a damaged one (no moov box in a file cut short, say).
        return fail(result, "the video's container cannot be read", message, message_size);
    }
    result = avformat_find_stream_info(video->format, NULL);
    if (result < 0) {
        if (has_timed_out(video)) return fail(WIV_TIMED_OUT, "the video's streams were not read in time", message, message_size);
        return fail(result, "the video's streams cannot be read", message, message_size);
    }
    return WIV_OK;
}

static int open_decoder(wiv_video *video, int64_t max_pixels, char *message, size_t message_size) {
    int stream = av_find_best_stream(video->format, AVMEDIA_TYPE_VIDEO, -1, -1, NULL, 0);
    if (stream < 0) return fail(WIV_NO_VIDEO, "the container has no video stream", message, message_size);
    video->stream = stream;
    for (unsigned index = 0; index < video->format->nb_streams; index++) {
        if ((int)index != stream) video->format->streams[index]->discard = AVDISCARD_ALL;
    }
    const AVCodecParameters *parameters = video->format->streams[stream]->codecpar;
    const AVCodec *decoder = allowed_decoder(parameters->codec_id);
    if (!decoder) {
        char text[160];
        snprintf(text, sizeof text, "the video's codec (%s) is not H.264, H.265, VP8, VP9 or AV1", avcodec_get_name(parameters->codec_id));
        return fail(WIV_UNSUPPORTED, text, message, message_size);
    }
    if (parameters->width <= 0 || parameters->height <= 0 || (int64_t)parameters->width * parameters->height > max_pixels) {
        char text[160];
        snprintf(text, sizeof text, "%dx%d is over the %lld-pixel limit", parameters->width, parameters->height, (long long)max_pixels);
        return fail(WIV_TOO_LARGE, text, message, message_size);
    }
    video->codec = avcodec_alloc_context3(decoder);
    if (!video->codec) return fail(WIV_NO_MEMORY, "no memory for the decoder", message, message_size);
    int result = avcodec_parameters_to_context(video->codec, parameters);
    if (result < 0) return fail(result, "the video's codec parameters are invalid", message, message_size);
    // One thread: the caller's work pool decides the parallelism; the frames are bounded by size.
    video->codec->thread_count = 1;
    video->codec->max_pixels = max_pixels;
    video->codec->pkt_timebase = video->format->streams[stream]->time_base;
    result = avcodec_open2(video->codec, decoder, NULL);
    if (result < 0) return fail(result, "the video's decoder cannot start", message, message_size);
    video->codec_name = decoder->name;
    video->packet = av_packet_alloc();
    video->frame = av_frame_alloc();
    video->current = av_frame_alloc();
    if (!video->packet || !video->frame || !video->current) return fail(WIV_NO_MEMORY, "no memory for the video's frames", message, message_size);
    return WIV_OK;
}

/// FFmpeg logs to standard error, process-wide: a damaged video would write there on every
/// request. Silenced once; each failure reaches the caller as its returned message instead.
static void silence_logging(void) { av_log_set_level(AV_LOG_QUIET); }

int wiv_open(const uint8_t *data, size_t size, int64_t max_pixels, uint64_t time_limit_ns, int64_t probe_size,
             int64_t max_analyze_duration, wiv_video **out, char *message, size_t message_size) {
    static pthread_once_t logging = PTHREAD_ONCE_INIT;
    pthread_once(&logging, silence_logging);
    *out = NULL;
    wiv_video *video = av_mallocz(sizeof *video);
    if (!video) return fail(WIV_NO_MEMORY, "no memory for the video", message, message_size);
    video->data = data;
    video->size = (int64_t)size;
    video->deadline_ns = monotonic_ns() + time_limit_ns;
    int result = open_container(video, probe_size, max_analyze_duration, message, message_size);
    if (result == WIV_OK) result = open_decoder(video, max_pixels, message, message_size);
    if (result != WIV_OK) {
        wiv_close(video);
        return result;
    }
    *out = video;
    return WIV_OK;
}

/// The longest gap between consecutive keyframes the demuxer's index lists (MP4's sample
/// table, WebM's cues), in seconds; 0 without two of them.
static double longest_keyframe_interval(AVStream *stream) {
    int count = avformat_index_get_entries_count(stream);
    int64_t previous = AV_NOPTS_VALUE;
    int64_t longest = 0;
    for (int index = 0; index < count; index++) {
        const AVIndexEntry *entry = avformat_index_get_entry(stream, index);
        if (!entry || !(entry->flags & AVINDEX_KEYFRAME)) continue;
        if (previous != AV_NOPTS_VALUE && entry->timestamp - previous > longest) longest = entry->timestamp - previous;
        previous = entry->timestamp;
    }
    return longest * av_q2d(stream->time_base);
}

/// A mastering display's peak luminance in cd/m², 0 when not stated or out of any real range.
static int display_peak(const AVMasteringDisplayMetadata *display) {
    if (!display->has_luminance || display->max_luminance.den == 0) return 0;
    double peak = av_q2d(display->max_luminance);
    return peak > 0 && peak < 100000 ? (int)lround(peak) : 0;
}

wiv_info wiv_get_info(const wiv_video *video) {
    const AVStream *stream = video->format->streams[video->stream];
    const AVCodecParameters *parameters = stream->codecpar;
    wiv_info info = {
        .width = parameters->width,
        .height = parameters->height,
        .duration = -1,
        .codec = video->codec_name,
        .container = video->format->iformat->name,
        .bit_depth = parameters->bits_per_raw_sample,
        .primaries = parameters->color_primaries,
        .transfer = parameters->color_trc,
        .matrix = parameters->color_space,
    };
    if (stream->duration != AV_NOPTS_VALUE && stream->duration > 0) {
        info.duration = stream->duration * av_q2d(stream->time_base);
    } else if (video->format->duration != AV_NOPTS_VALUE && video->format->duration > 0) {
        info.duration = video->format->duration / (double)AV_TIME_BASE;
    }
    const uint8_t *display = av_stream_get_side_data(stream, AV_PKT_DATA_DISPLAYMATRIX, NULL);
    if (display) {
        // FFmpeg gives the counterclockwise angle the matrix turns by; shown upright is the opposite.
        int degrees = (int)lround(-av_display_rotation_get((const int32_t *)display));
        info.rotation = ((degrees % 360) + 360) % 360;
    }
    info.keyframe_interval = longest_keyframe_interval(video->format->streams[video->stream]);
    if (stream->avg_frame_rate.num > 0 && stream->avg_frame_rate.den > 0) info.frame_rate = av_q2d(stream->avg_frame_rate);
    if (info.bit_depth == 0) {
        const AVPixFmtDescriptor *format = av_pix_fmt_desc_get(parameters->format);
        if (format) info.bit_depth = format->comp[0].depth;
    }
    wiv_get_light(video, &info.max_content_light, &info.max_display_luminance);
    return info;
}

void wiv_get_light(const wiv_video *video, int *max_content_light, int *max_display_luminance) {
    const AVStream *stream = video->format->streams[video->stream];
    const AVContentLightMetadata *light = (const void *)av_stream_get_side_data(stream, AV_PKT_DATA_CONTENT_LIGHT_LEVEL, NULL);
    const AVMasteringDisplayMetadata *mastering =
        (const void *)av_stream_get_side_data(stream, AV_PKT_DATA_MASTERING_DISPLAY_METADATA, NULL);
    // The container's values where it states them (a 0 there is "unknown"), else the frames'.
    int container_peak = mastering ? display_peak(mastering) : 0;
    *max_content_light = light && light->MaxCLL > 0 ? (int)light->MaxCLL : video->frame_content_light;
    *max_display_luminance = container_peak > 0 ? container_peak : video->frame_display_luminance;
}

/// Keeps what a frame's side data states of HDR10's static metadata (H.265 carries it in SEI
/// messages, which the container does not repeat).
static void note_light_levels(wiv_video *video, const AVFrame *frame) {
    const AVFrameSideData *light = av_frame_get_side_data(frame, AV_FRAME_DATA_CONTENT_LIGHT_LEVEL);
    if (light && light->size >= sizeof(AVContentLightMetadata)) {
        video->frame_content_light = (int)((const AVContentLightMetadata *)light->data)->MaxCLL;
    }
    const AVFrameSideData *mastering = av_frame_get_side_data(frame, AV_FRAME_DATA_MASTERING_DISPLAY_METADATA);
    if (mastering && mastering->size >= sizeof(AVMasteringDisplayMetadata)) {
        int peak = display_peak((const AVMasteringDisplayMetadata *)mastering->data);
        if (peak > 0) video->frame_display_luminance = peak;
    }
}

/// The stream's start, in its time base (0 when the container gives none).
static int64_t stream_start(const wiv_video *video) {
    int64_t start = video->format->streams[video->stream]->start_time;
    return start == AV_NOPTS_VALUE ? 0 : start;
}

int wiv_seek(wiv_video *video, double seconds, char *message, size_t message_size) {
    const AVStream *stream = video->format->streams[video->stream];
    int64_t target = stream_start(video) + (int64_t)(seconds / av_q2d(stream->time_base));
    int result = av_seek_frame(video->format, video->stream, target, AVSEEK_FLAG_BACKWARD);
    if (result < 0) {
        if (has_timed_out(video)) return fail(WIV_TIMED_OUT, "the video was not read in time", message, message_size);
        return fail(result, "the video cannot be sought", message, message_size);
    }
    avcodec_flush_buffers(video->codec);
    video->draining = 0;
    return WIV_OK;
}

/// Hands the decoder the next packet of the stream (the next key one with `keyframes_only`),
/// or the end of the stream.
static int feed_decoder(wiv_video *video, int keyframes_only, char *message, size_t message_size) {
    for (;;) {
        if (has_timed_out(video)) return fail(WIV_TIMED_OUT, "the video was not decoded in time", message, message_size);
        int result = av_read_frame(video->format, video->packet);
        if (result == AVERROR_EOF) {
            video->draining = 1;
            avcodec_send_packet(video->codec, NULL);
            return WIV_OK;
        }
        if (result < 0) {
            if (has_timed_out(video)) return fail(WIV_TIMED_OUT, "the video was not read in time", message, message_size);
            return fail(result, "the video's container is damaged", message, message_size);
        }
        int wanted = video->packet->stream_index == video->stream && (!keyframes_only || (video->packet->flags & AV_PKT_FLAG_KEY));
        if (wanted) result = avcodec_send_packet(video->codec, video->packet);
        av_packet_unref(video->packet);
        if (!wanted) continue;
        if (result < 0 && result != AVERROR(EAGAIN)) return fail(result, "the video's data is damaged", message, message_size);
        return WIV_OK;
    }
}

int wiv_next_frame(wiv_video *video, int keyframes_only, double *seconds, int *is_keyframe, char *message,
                   size_t message_size) {
    for (;;) {
        int result = avcodec_receive_frame(video->codec, video->frame);
        if (result == 0) {
            av_frame_unref(video->current);
            av_frame_move_ref(video->current, video->frame);
            note_light_levels(video, video->current);
            const AVStream *stream = video->format->streams[video->stream];
            int64_t time = video->current->best_effort_timestamp;
            if (time == AV_NOPTS_VALUE) time = video->current->pts;
            *seconds = time == AV_NOPTS_VALUE ? 0 : (time - stream_start(video)) * av_q2d(stream->time_base);
            *is_keyframe = video->current->key_frame;
            return WIV_OK;
        }
        if (result == AVERROR_EOF) return WIV_END;
        if (result != AVERROR(EAGAIN)) return fail(result, "the video's data is damaged", message, message_size);
        if (video->draining) return WIV_END;
        result = feed_decoder(video, keyframes_only, message, message_size);
        if (result != WIV_OK) return result;
    }
}

void wiv_frame_size(const wiv_video *video, int *width, int *height) {
    *width = video->current->width;
    *height = video->current->height;
}

/// swscale's coefficients for the frame's matrix; an unlabelled one is BT.709 from HD up and
/// BT.601 below, as players assume.
static int matrix_coefficients(const AVFrame *frame) {
    switch (frame->colorspace) {
    case AVCOL_SPC_BT709: return SWS_CS_ITU709;
    case AVCOL_SPC_FCC: return SWS_CS_FCC;
    case AVCOL_SPC_SMPTE240M: return SWS_CS_SMPTE240M;
    case AVCOL_SPC_BT2020_NCL:
    case AVCOL_SPC_BT2020_CL: return SWS_CS_BT2020;
    case AVCOL_SPC_BT470BG:
    case AVCOL_SPC_SMPTE170M: return SWS_CS_ITU601;
    default: return frame->width >= 1280 || frame->height > 576 ? SWS_CS_ITU709 : SWS_CS_ITU601;
    }
}

int wiv_copy_rgba(wiv_video *video, int bits, uint8_t *destination, size_t stride, char *message, size_t message_size) {
    const AVFrame *frame = video->current;
    if (!frame->data[0]) return fail(WIV_END, "no frame was decoded", message, message_size);
    // AV_PIX_FMT_RGBA64 is native-endian 16-bit RGBA: the samples of a 10- or 12-bit frame
    // scaled to 16 bits, in the stream's own transfer (PQ and HLG code values stay as they are).
    enum AVPixelFormat output = bits == 16 ? AV_PIX_FMT_RGBA64 : AV_PIX_FMT_RGBA;
    video->scaler = sws_getCachedContext(video->scaler, frame->width, frame->height, frame->format, frame->width, frame->height,
                                         output, SWS_BICUBIC | SWS_ACCURATE_RND | SWS_FULL_CHR_H_INT, NULL, NULL, NULL);
    if (!video->scaler) return fail(WIV_UNSUPPORTED, "the video's pixel format cannot be converted", message, message_size);
    int full_range = frame->color_range == AVCOL_RANGE_JPEG || frame->format == AV_PIX_FMT_YUVJ420P ||
                     frame->format == AV_PIX_FMT_YUVJ422P || frame->format == AV_PIX_FMT_YUVJ444P;
    const int *coefficients = sws_getCoefficients(matrix_coefficients(frame));
    sws_setColorspaceDetails(video->scaler, coefficients, full_range, sws_getCoefficients(SWS_CS_DEFAULT), 1, 0, 1 << 16, 1 << 16);
    uint8_t *planes[4] = {destination, NULL, NULL, NULL};
    int strides[4] = {(int)stride, 0, 0, 0};
    int rows = sws_scale(video->scaler, (const uint8_t *const *)frame->data, frame->linesize, 0, frame->height, planes, strides);
    if (rows != frame->height) return fail(WIV_UNSUPPORTED, "the video's frame cannot be converted", message, message_size);
    return WIV_OK;
}

void wiv_close(wiv_video *video) {
    if (!video) return;
    sws_freeContext(video->scaler);
    av_frame_free(&video->frame);
    av_frame_free(&video->current);
    av_packet_free(&video->packet);
    avcodec_free_context(&video->codec);
    avformat_close_input(&video->format);
    if (video->io) av_freep(&video->io->buffer);
    avio_context_free(&video->io);
    av_free(video);
}
#endif
