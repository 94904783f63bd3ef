#!/bin/sh
# Nightly backup of the notes folder with restic.
set -eu
restic -r /mnt/backup/notes backup "$HOME/notes"

# Keep a week of dailies and a year of monthlies.
restic -r /mnt/backup/notes forget --keep-daily 7 --keep-monthly 12 --prune
