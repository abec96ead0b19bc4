# Sourced by the scripts that build the debug configuration in .build: every one builds it with
# the package's Vapor and Video traits, so that the suite tests WebImageVapor and the video coder
# (FFmpeg), and no script rebuilds the
# folder with other flags (a trait is a compilation condition of every target: changing the set
# rebuilds the whole package). The static release build and the sanitizers' builds, in folders
# of their own, leave them off: they are built as an application that asks for neither is, and
# the Python package's tests run that build's command, which refuses videos.
# shellcheck shell=bash
debug_traits=(--traits Vapor,Video)
