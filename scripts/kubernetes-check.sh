#!/usr/bin/env bash
# Renders the Kubernetes manifests under deploy/kubernetes with `kubectl kustomize` (the base, the
# example overlay with the cache tier, the prefetch Indexed Job) and validates every resource
# offline against the Kubernetes schemas with kubernetes-validate (PyPI), strictly (an unknown
# field fails). Also checks that the cache tier's nginx file is deploy/nginx/webimage-cache.conf
# with only its upstream changed.
#
# Usage: scripts/kubernetes-check.sh [KUBERNETES_VALIDATE]
set -euo pipefail

validate=${1:-kubernetes-validate}
repo=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

kubectl version --client 2>/dev/null | grep -q 'Kustomize Version: v[5-9]' \
    || { echo "kubectl with kustomize 5 or later is needed (components, labels)" >&2; exit 1; }
for overlay in base example prefetch-job; do
    kubectl kustomize "$repo/deploy/kubernetes/$overlay" > "$work/$overlay.yaml"
    "$validate" --strict --quiet "$work/$overlay.yaml"
    echo "$overlay: $(grep -c '^kind:' "$work/$overlay.yaml") resources rendered and valid"
done

python3 - "$repo/deploy/nginx/webimage-cache.conf" "$repo/deploy/kubernetes/components/cache-tier/webimage-cache.conf" <<'PYTHON'
import re, sys
def settings(path):
    text = open(path).read()
    text = re.sub(r"upstream webimage_nodes \{.*?\n\}\n", "", text, flags=re.S)
    return [line.strip() for line in text.splitlines() if line.strip() and not line.strip().startswith("#")]
fleet, kubernetes = settings(sys.argv[1]), settings(sys.argv[2])
if fleet != kubernetes:
    import difflib
    sys.exit("the cache tier's nginx file differs from deploy/nginx beyond its upstream:\n"
             + "\n".join(difflib.unified_diff(fleet, kubernetes, lineterm="")))
print("cache tier: deploy/nginx/webimage-cache.conf but for its upstream")
PYTHON
