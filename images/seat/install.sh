# Offline: the wheels are in /bench-inputs, pinned by hash twice (image.toml and here).
# SOURCE_DATE_EPOCH makes pip write hash-checked .pyc files, the same bytes on every build.
set -eu
python3 -m pip install --quiet --no-index --no-cache-dir --break-system-packages --require-hashes \
    --only-binary=:all: --find-links /bench-inputs -r requirements.txt
