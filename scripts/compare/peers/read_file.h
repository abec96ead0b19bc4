// The whole of a file in memory, for the peer programs in this folder; exits on any failure
// (a peer that cannot read its input has nothing to measure).
#include <stdio.h>
#include <stdlib.h>

static unsigned char *read_file(const char *path, size_t *size) {
    FILE *file = fopen(path, "rb");
    if (!file) exit(1);
    fseek(file, 0, SEEK_END);
    *size = (size_t)ftell(file);
    fseek(file, 0, SEEK_SET);
    unsigned char *data = malloc(*size);
    if (data == NULL || fread(data, 1, *size, file) != *size) exit(1);
    fclose(file);
    return data;
}
