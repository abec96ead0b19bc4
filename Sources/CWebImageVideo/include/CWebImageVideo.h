#ifndef CWEBIMAGEVIDEO_H
#define CWEBIMAGEVIDEO_H

#include <stddef.h>
#include <stdint.h>

/// A video demuxed and decoded from memory by FFmpeg (libavformat, libavcodec, libswscale).
/// FFmpeg opens no file and no URL: it reads the caller's bytes through a custom I/O context,
/// and only the containers and codecs named in video.c.
typedef struct wiv_video wiv_video;

/// What the container says about its video stream.
typedef struct {
    int width;
    int height;
    /// Seconds; negative when the container does not say.
    double duration;
    /// Frames per second from the stream's average rate; 0 when unknown.
    double frame_rate;
    /// The decoder's name ("h264", "hevc", "vp8", "vp9", "libdav1d").
    const char *codec;
    /// The demuxer's name ("mov,mp4,m4a,3gp,3g2,mj2" or "matroska,webm").
    const char *container;
    /// The stream's bits per raw sample (8, 10, 12), 0 when unknown.
    int bit_depth;
    /// H.273 code points of the stream: primaries, transfer characteristics, matrix.
    int primaries;
    int transfer;
    int matrix;
    /// Degrees the frames are turned clockwise to be shown upright (0, 90, 180 or 270), from the
    /// stream's display matrix (a phone's portrait video).
    int rotation;
    /// The longest time between two keyframes in the container's index, in seconds; 0 when the
    /// index does not say.
    double keyframe_interval;
    /// HDR10's static metadata in cd/m², 0 where not stated: the content light level (MaxCLL) and
    /// the mastering display's peak luminance. From the container, else from the frames decoded
    /// so far (H.265's SEI messages).
    int max_content_light;
    int max_display_luminance;
} wiv_info;

/// Results besides FFmpeg's own (negative AVERROR) codes.
enum {
    WIV_OK = 0,
    /// No frame left in the stream.
    WIV_END = 1,
    /// The deadline passed: reads and decoding were interrupted.
    WIV_TIMED_OUT = -100001,
    /// A container or codec outside the allowed ones.
    WIV_UNSUPPORTED = -100002,
    /// No video stream in the container.
    WIV_NO_VIDEO = -100003,
    /// The stream's dimensions are over the caller's pixel limit (or zero).
    WIV_TOO_LARGE = -100004,
    /// Memory could not be had.
    WIV_NO_MEMORY = -100005,
};

/// Opens `size` bytes at `data` (borrowed: they must outlive the handle). `max_pixels` bounds a
/// frame's width times height; `time_limit_ns` from now, every read and decode is interrupted; `probe_size` (bytes) and `max_analyze_duration` (microseconds,
/// 0 for FFmpeg's heuristic) bound the stream analysis. On failure returns a negative code and
/// writes a message into `message`.
int wiv_open(const uint8_t *data, size_t size, int64_t max_pixels, uint64_t time_limit_ns, int64_t probe_size,
             int64_t max_analyze_duration, wiv_video **out, char *message, size_t message_size);

/// The stream's description; valid while the handle is open.
wiv_info wiv_get_info(const wiv_video *video);

/// wiv_info's HDR10 light levels alone, as the frames decoded so far leave them (cd/m², 0 where
/// not stated): cheaper than wiv_get_info, which also walks the container's index.
void wiv_get_light(const wiv_video *video, int *max_content_light, int *max_display_luminance);

/// Seeks to the last keyframe at or before `seconds` (the first one when `seconds` is 0) and
/// empties the decoder.
int wiv_seek(wiv_video *video, double seconds, char *message, size_t message_size);

/// Decodes the next frame (with `keyframes_only`, the next keyframe: other packets are not
/// decoded). Writes its time in seconds and whether it is a keyframe. Returns WIV_OK, WIV_END
/// or a negative code.
int wiv_next_frame(wiv_video *video, int keyframes_only, double *seconds, int *is_keyframe, char *message,
                   size_t message_size);

/// The current frame's size, which may differ from the stream's.
void wiv_frame_size(const wiv_video *video, int *width, int *height);

/// Converts the current frame to RGBA (opaque) of `bits` (8, or 16: native-endian `uint16_t`
/// samples) into `destination`, `stride` bytes a row, at the frame's own size, with its matrix
/// and range; the samples stay in the stream's transfer.
int wiv_copy_rgba(wiv_video *video, int bits, uint8_t *destination, size_t stride, char *message, size_t message_size);

/// Frees the handle and everything FFmpeg allocated for it.
void wiv_close(wiv_video *video);

#endif
