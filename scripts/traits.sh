# Sourced by the scripts that build the debug configuration in .build: every one builds it with
# the package's Vapor trait, so that the suite tests WebImageVapor and no script rebuilds the
# folder with other flags (a trait is a compilation condition of every target: changing the set
# rebuilds the whole package). The static release build and the sanitizers' builds, in folders
# of their own, leave it off: they are built as an application that does not ask for Vapor is.
# shellcheck shell=bash
debug_traits=(--traits Vapor)
