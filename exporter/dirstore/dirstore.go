// Package dirstore is the exporter's ObjectStore on a local directory
// (OUTPUT_DIR): the same keys as in S3, as slash-separated paths under a
// root directory. It serves demos, air-gapped sites and tests.
//
// Put writes a temp file next to the destination, fsyncs it and renames it
// into place, so a reader (or a crash) sees the old file or the new one,
// never a partial one (CONTRACT §3).
//
// Conditional Puts have S3's semantics. Create-only publishes the temp
// file with a hard link, which fails atomically when the key exists.
// Replace-only compares the key's ETag (derived from its size, mtime and
// inode, which every Put changes because it renames a new file into place)
// and renames while holding an exclusive lock on the directory, so two
// replacing writers cannot both pass the check.
//
// Object metadata is kept in one extended attribute of the file
// (user.kubecost-s3-exporter.meta, JSON), set on the temp file before the
// rename. The attribute belongs to the inode, so the rename publishes data
// and metadata in one atomic step: no reader ever sees the new file with
// the old metadata. Sidecar files could not give that, and they would show
// up for every tool that reads the tree (Athena-style readers, rsync to S3).
// On a filesystem or platform without extended attributes, Put logs one
// warning and stores the file without metadata; Head then reports none.
//
// All file access goes through os.Root, so no key can reach outside the
// root, not even through a symlink planted in the tree.
package dirstore

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/kubecost-s3-exporter/kubecost-s3-exporter/exporter"
)

var _ exporter.ObjectStore = (*Store)(nil)

// Permissions of what the store creates, before the process umask.
const (
	dirPerm  fs.FileMode = 0o755
	filePerm fs.FileMode = 0o644
)

// Options configure a Store.
type Options struct {
	// Logger receives debug events per operation. nil discards them.
	Logger *slog.Logger
}

// Store is an exporter.ObjectStore on a directory. It is safe for
// concurrent use, also by several processes: the last rename wins.
type Store struct {
	root    string
	log     *slog.Logger
	noXattr sync.Once // warns once that metadata cannot be kept
}

// New returns a Store on root, creating root (and its parents) when
// missing, so that OUTPUT_DIR=./out just works.
func New(root string, opts Options) (*Store, error) {
	if root == "" {
		return nil, fmt.Errorf("dirstore: invalid options: %w", exporter.FieldErrors{{Field: "root", Value: "", Msg: "required"}})
	}
	s := &Store{root: root, log: cmp.Or(opts.Logger, slog.New(slog.DiscardHandler))}
	if err := os.MkdirAll(root, dirPerm); err != nil {
		return nil, fmt.Errorf("dirstore: %w", err)
	}
	r, err := s.openRoot()
	if err != nil {
		return nil, err
	}
	r.Close()
	return s, nil
}

// openRoot opens the root afresh for each operation. That costs one
// syscall and spares callers a Close method the ObjectStore interface does
// not have; it also follows the directory if it is replaced.
func (s *Store) openRoot() (*os.Root, error) {
	r, err := os.OpenRoot(s.root)
	if err != nil {
		return nil, fmt.Errorf("dirstore: %w", err)
	}
	return r, nil
}

// begin checks key and ctx for operation op, then opens the root.
func (s *Store) begin(ctx context.Context, op, key string) (*os.Root, error) {
	if err := cmp.Or(checkKey(key), ctx.Err()); err != nil {
		return nil, fmt.Errorf("dirstore: %s %s: %w", op, key, err)
	}
	return s.openRoot()
}

// missing reports whether err means there is no file: opening "a/b" when
// "a" is a file gives ENOTDIR, and as far as objects go, "a/b" simply does
// not exist.
func missing(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
}

// tempRE matches the temp files Put creates: .<name>.tmp-<16 hex digits>.
var tempRE = regexp.MustCompile(`^\..+\.tmp-[0-9a-f]{16}$`)

// IsTemp reports whether base is the name of one of Put's temp files. List
// skips them; a crash can leave one behind, and it is safe to delete.
func IsTemp(base string) bool { return tempRE.MatchString(base) }

// checkKey accepts keys that map to a file below the root: relative,
// slash-separated, without empty, "." or ".." segments, and not named like
// a temp file (which List would hide).
func checkKey(key string) error {
	switch {
	case !fs.ValidPath(key) || key == ".":
		return errors.New("key must be a relative slash-separated path without empty, . or .. segments")
	case strings.ContainsAny(key, "\\\x00"):
		return errors.New("key must not contain a backslash or NUL")
	case IsTemp(path.Base(key)):
		return errors.New("key is named like a dirstore temp file")
	}
	return nil
}

// List calls fn for each file under prefix whose key sorts after
// startAfter, in byte-wise lexical order like S3. It walks only the
// deepest directory the prefix names, then sorts: a directory walk alone
// would put "a/b" before "a-c", S3 does not.
func (s *Store) List(ctx context.Context, prefix, startAfter string, fn func(exporter.ObjectInfo) error) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("dirstore: list %s: %w", prefix, err)
	}
	r, err := s.openRoot()
	if err != nil {
		return err
	}
	defer r.Close()

	start := "."
	if i := strings.LastIndexByte(prefix, '/'); i > 0 {
		start = prefix[:i]
	}
	if !fs.ValidPath(start) {
		return nil // no file key can have this prefix
	}
	var found []exporter.ObjectInfo
	err = fs.WalkDir(r.FS(), start, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == start && missing(err) {
				return fs.SkipAll
			}
			return err
		}
		if d.IsDir() {
			// Skip subtrees that can hold no key under prefix.
			if p != "." && !strings.HasPrefix(p+"/", prefix) && !strings.HasPrefix(prefix, p+"/") {
				return fs.SkipDir
			}
			return nil
		}
		// Symlinks and other special files are not objects.
		if !d.Type().IsRegular() || IsTemp(d.Name()) || !strings.HasPrefix(p, prefix) || p <= startAfter {
			return nil
		}
		info, err := d.Info()
		if errors.Is(err, fs.ErrNotExist) {
			return nil // deleted while we walked
		} else if err != nil {
			return err
		}
		found = append(found, exporter.ObjectInfo{Key: p, Size: info.Size(), ETag: etag(info)})
		return nil
	})
	if err != nil {
		return fmt.Errorf("dirstore: list %s: %w", prefix, err)
	}
	slices.SortFunc(found, func(a, b exporter.ObjectInfo) int { return strings.Compare(a.Key, b.Key) })
	for _, o := range found {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("dirstore: list %s: %w", prefix, err)
		}
		if err := fn(o); err != nil {
			return err
		}
	}
	s.log.DebugContext(ctx, "dir list", "root", s.root, "prefix", prefix, "start_after", startAfter, "keys", len(found))
	return nil
}

// Put writes r to key through a temp file in the destination directory,
// fsyncs it, publishes it under key when cond holds and fsyncs the
// directory. When r fails, ctx ends or cond fails, the temp file is
// removed and key is untouched. meta goes into an extended attribute of
// the temp file (see the package comment).
func (s *Store) Put(ctx context.Context, key string, r io.Reader, meta map[string]string, cond exporter.Precondition) (err error) {
	defer func() {
		if err != nil {
			err = fmt.Errorf("dirstore: put %s: %w", key, err)
		}
	}()
	if err := checkKey(key); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	start := time.Now()
	root, err := s.openRoot()
	if err != nil {
		return err
	}
	defer root.Close()

	dir := path.Dir(key)
	if dir != "." {
		if err := root.MkdirAll(filepath.FromSlash(dir), dirPerm); err != nil {
			return err
		}
	}
	tmp := path.Join(dir, "."+path.Base(key)+".tmp-"+randomHex(8))
	// O_EXCL: two writers of the same key never share a temp file.
	f, err := root.OpenFile(filepath.FromSlash(tmp), os.O_WRONLY|os.O_CREATE|os.O_EXCL, filePerm)
	if err != nil {
		return err
	}
	committed := false
	defer func() {
		if !committed {
			f.Close()
			if rerr := root.Remove(filepath.FromSlash(tmp)); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
				s.log.WarnContext(ctx, "dirstore: could not remove temp file", "path", filepath.Join(s.root, tmp), "error", rerr)
			}
		}
	}()

	n, err := io.Copy(f, exporter.ContextReader(ctx, r))
	if err != nil {
		return err
	}
	if err := s.setMeta(ctx, f, meta); err != nil {
		return err
	}
	// Sync before rename: otherwise a crash can leave the new name pointing
	// at an empty or partial file on some filesystems.
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	// Last chance to honour a cancellation before the object becomes visible.
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := publish(root, dir, tmp, key, cond); err != nil {
		return err
	}
	committed = true
	// Persist the rename itself. Failure here is reported, but the object
	// is already complete and visible.
	if d, err := root.Open(filepath.FromSlash(dir)); err == nil {
		serr := d.Sync()
		d.Close()
		if serr != nil {
			return serr
		}
	}
	s.log.DebugContext(ctx, "dir put", "root", s.root, "key", key, "bytes", n, "duration", time.Since(start))
	return nil
}

// Open returns the file at key. A missing key, or one that names a
// directory, gives an error wrapping exporter.ErrNotExist.
func (s *Store) Open(ctx context.Context, key string) (io.ReadCloser, error) {
	root, err := s.begin(ctx, "open", key)
	if err != nil {
		return nil, err
	}
	defer root.Close() // files opened through root stay open

	f, err := root.Open(filepath.FromSlash(key))
	if missing(err) {
		return nil, fmt.Errorf("dirstore: open %s: %w", key, exporter.ErrNotExist)
	} else if err != nil {
		return nil, fmt.Errorf("dirstore: open %s: %w", key, err)
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("dirstore: open %s: %w", key, cmp.Or(err, exporter.ErrNotExist))
	}
	return f, nil
}

// Delete removes the file at key. A missing key is not an error, nor is a
// key that names a directory (no object has that key). Emptied directories
// are kept: removing them would race with a concurrent Put creating a file
// in them, and List ignores empty directories anyway.
func (s *Store) Delete(ctx context.Context, key string) error {
	root, err := s.begin(ctx, "delete", key)
	if err != nil {
		return err
	}
	defer root.Close()

	name := filepath.FromSlash(key)
	fi, err := root.Lstat(name)
	switch {
	case missing(err):
		return nil
	case err != nil:
		return fmt.Errorf("dirstore: delete %s: %w", key, err)
	case fi.IsDir():
		return nil
	}
	if err := root.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("dirstore: delete %s: %w", key, err)
	}
	s.log.DebugContext(ctx, "dir delete", "root", s.root, "key", key)
	return nil
}

// publish moves the finished temp file to key when cond holds.
func publish(root *os.Root, dir, tmp, key string, cond exporter.Precondition) error {
	from, to := filepath.FromSlash(tmp), filepath.FromSlash(key)
	switch {
	case cond.IfNoneMatch:
		// link(2) never replaces: the key appears atomically or the call
		// fails with EEXIST, whoever else writes it at the same moment.
		if err := root.Link(from, to); errors.Is(err, fs.ErrExist) {
			root.Remove(from)
			return exporter.ErrPreconditionFailed
		} else if err != nil {
			return err
		}
		return root.Remove(from)
	case cond.IfMatch != "":
		unlock, err := lockDir(root, dir)
		if err != nil {
			return err
		}
		defer unlock()
		fi, err := root.Stat(to)
		if err != nil || etag(fi) != cond.IfMatch {
			root.Remove(from)
			if err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
			return exporter.ErrPreconditionFailed
		}
	}
	return root.Rename(from, to)
}

// metaXattr is the extended attribute holding an object's user metadata.
const metaXattr = "user.kubecost-s3-exporter.meta"

// setMeta stores meta on the temp file f. Keys are lower-cased, as S3
// returns them, so both stores read back alike.
func (s *Store) setMeta(ctx context.Context, f *os.File, meta map[string]string) error {
	if len(meta) == 0 {
		return nil
	}
	lower := make(map[string]string, len(meta))
	for k, v := range meta {
		lower[strings.ToLower(k)] = v
	}
	b, err := json.Marshal(lower)
	if err != nil {
		return err
	}
	if err := setXattr(f, b); err != nil {
		if !unsupported(err) {
			return fmt.Errorf("store metadata: %w", err)
		}
		s.noXattr.Do(func() {
			s.log.WarnContext(ctx, "dirstore: this filesystem keeps no extended attributes, so files are stored without metadata; "+
				"days already stored will not be re-exported on config change or drift", "root", s.root, "error", err.Error())
		})
	}
	return nil
}

// Head returns the file's size, ETag and metadata. A missing key, or one
// that names a directory, gives an error wrapping exporter.ErrNotExist.
func (s *Store) Head(ctx context.Context, key string) (exporter.ObjectAttrs, error) {
	rc, err := s.Open(ctx, key)
	if err != nil {
		if errors.Is(err, exporter.ErrNotExist) {
			return exporter.ObjectAttrs{}, fmt.Errorf("dirstore: head %s: %w", key, exporter.ErrNotExist)
		}
		return exporter.ObjectAttrs{}, fmt.Errorf("dirstore: head %s: %w", key, err)
	}
	f := rc.(*os.File)
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return exporter.ObjectAttrs{}, fmt.Errorf("dirstore: head %s: %w", key, err)
	}
	// Data and attribute come from the same open file, hence the same
	// inode: a concurrent Put cannot pair this file with other metadata.
	raw, err := getXattr(f)
	if err != nil {
		return exporter.ObjectAttrs{}, fmt.Errorf("dirstore: head %s: read metadata: %w", key, err)
	}
	meta := map[string]string{}
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &meta); err != nil {
			return exporter.ObjectAttrs{}, fmt.Errorf("dirstore: head %s: metadata attribute is not JSON: %w", key, err)
		}
	}
	return exporter.ObjectAttrs{Size: fi.Size(), ETag: etag(fi), Metadata: meta}, nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails on supported platforms
	return hex.EncodeToString(b)
}
