// Package dirstore is the exporter's ObjectStore on a local directory (OUTPUT_DIR): S3's
// keys as slash-separated paths under a root, for demos, air-gapped sites and tests.
//
// Put writes a temp file next to the destination, fsyncs it and renames it into place, so a
// reader (or a crash) sees the old file or the new one, never a partial one (CONTRACT §3).
//
// Conditional Puts have S3's semantics. Create-only publishes with a hard link, which fails
// atomically when the key exists. Replace-only compares the ETag (size, mtime and inode,
// which every Put's rename changes) and renames under an exclusive directory lock, so two
// replacing writers cannot both pass the check.
//
// Metadata is one extended attribute (user.kubecost-s3-exporter.meta, JSON) set on the temp
// file: it belongs to the inode, so the rename publishes data and metadata atomically.
// Sidecar files could not, and would show up for every tool reading the tree (Athena-style
// readers, rsync to S3). Without xattrs, Put warns once and stores no metadata.
//
// All access goes through os.Root: no key reaches outside the root, not even by a symlink.
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
	Logger *slog.Logger // debug events per operation; nil discards them
}

// Store is an exporter.ObjectStore on a directory, safe for concurrent use, also by several
// processes: the last rename wins.
type Store struct {
	root    string
	log     *slog.Logger
	noXattr sync.Once // warns once that metadata cannot be kept
}

// New returns a Store on root, creating it and its parents, so OUTPUT_DIR=./out just works.
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

// openRoot opens the root afresh for each operation: one syscall spares a Close the
// ObjectStore interface lacks, and follows a replaced directory.
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

// missing reports whether err means no file; "a/b" when "a" is a file (ENOTDIR) too.
func missing(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
}

// tempRE matches the temp files Put creates: .<name>.tmp-<16 hex digits>.
var tempRE = regexp.MustCompile(`^\..+\.tmp-[0-9a-f]{16}$`)

// IsTemp reports whether base names one of Put's temp files. List skips them; one left by
// a crash is safe to delete.
func IsTemp(base string) bool { return tempRE.MatchString(base) }

// checkKey accepts keys of a file below the root, not named like a temp file (List hides them).
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

// List calls fn for each file under prefix after startAfter, in S3's byte order. It walks
// the deepest directory the prefix names, then sorts: a walk puts "a/b" before "a-c", S3 does not.
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

// Put writes r through a temp file in key's directory, fsyncs it, publishes it when cond
// holds and fsyncs the directory (see the package comment).
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
	// Sync before rename, else a crash can leave the new name on a partial file on some
	// filesystems.
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	// Last chance to honour a cancellation before the object is visible.
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := publish(root, dir, tmp, key, cond); err != nil {
		return err
	}
	committed = true
	// Persist the rename; a failure is reported, but the object is complete and visible.
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

// Open returns the file at key; a missing key or a directory wraps exporter.ErrNotExist.
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

// Delete removes the file at key; a missing key or a directory is no error. Emptied
// directories are kept: removing them would race a concurrent Put, and List ignores them.
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
		// link(2) never replaces: the key appears atomically or it fails with EEXIST.
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

// setMeta stores meta on the temp file f, keys lower-cased as S3 returns them.
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

// Head returns the file's size, ETag and metadata; a missing key or a directory wraps
// exporter.ErrNotExist.
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
	// The same open file, hence inode: a concurrent Put cannot pair it with other metadata.
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
