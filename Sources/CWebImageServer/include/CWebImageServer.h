#ifndef CWEBIMAGESERVER_H
#define CWEBIMAGESERVER_H

/// Closes `descriptor` (a listening socket) when the process receives a crash signal (SIGABRT,
/// SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP), before the handler that was installed before
/// (Swift's crash reporter) runs. The crash reporter holds the crashed process for as long as it
/// symbolicates (up to its timeout, 30 s by default); without this the process kept its port all
/// that time and a restarted server could not bind it. Up to 16 descriptors; returns 0, or -1
/// when the table is full or a handler could not be installed.
int cwi_close_on_crash(int descriptor);

#endif
