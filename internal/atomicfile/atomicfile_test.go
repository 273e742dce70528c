package atomicfile

import (
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("atomicfile", func() {
	var dir string
	BeforeEach(func() { dir = GinkgoT().TempDir() })
	names := func() []string {
		entries, err := os.ReadDir(dir)
		Expect(err).NotTo(HaveOccurred())
		var n []string
		for _, e := range entries {
			n = append(n, e.Name())
		}
		return n
	}

	It("reads the process umask and gives files 0666 less it", func() {
		mask := syscall.Umask(0o022)
		syscall.Umask(mask)
		Expect(Mode()).To(Equal(fs.FileMode(0o666 &^ mask)))
		p := filepath.Join(dir, "a")
		Expect(WriteFile(p, []byte("x"))).To(Succeed())
		fi, err := os.Stat(p)
		Expect(err).NotTo(HaveOccurred())
		Expect(fi.Mode().Perm()).To(Equal(Mode()))
	})

	It("shows nothing at the path until Commit, and nothing at all after Abort", func() {
		p := filepath.Join(dir, "b")
		f, err := Create(p)
		Expect(err).NotTo(HaveOccurred())
		_, err = f.WriteString("data")
		Expect(err).NotTo(HaveOccurred())
		Expect(p).NotTo(BeAnExistingFile())
		Expect(f.Commit()).To(Succeed())
		Expect(os.ReadFile(p)).To(Equal([]byte("data")))
		g, err := Create(filepath.Join(dir, "c"))
		Expect(err).NotTo(HaveOccurred())
		g.Abort()
		Expect(names()).To(ConsistOf("b"))
	})

	It("refuses to replace a directory, a symbolic link or a non-regular file", func() {
		Expect(os.Mkdir(filepath.Join(dir, "d"), 0o755)).To(Succeed())
		Expect(os.Symlink("d", filepath.Join(dir, "l"))).To(Succeed())
		Expect(syscall.Mkfifo(filepath.Join(dir, "p"), 0o644)).To(Succeed())
		for name, why := range map[string]string{"d": "is a directory", "l": "is a symbolic link", "p": "not a regular file"} {
			_, err := Create(filepath.Join(dir, name))
			Expect(err).To(MatchError(ContainSubstring(why)), name)
		}
		Expect(names()).To(ConsistOf("d", "l", "p"))
	})

	It("removes every pending temporary file on RemovePending and commits nothing after", func() {
		DeferCleanup(func() {
			mu.Lock()
			closed = false
			mu.Unlock()
		})
		a, err := Create(filepath.Join(dir, "a"))
		Expect(err).NotTo(HaveOccurred())
		b, err := Create(filepath.Join(dir, "b"))
		Expect(err).NotTo(HaveOccurred())
		Expect(names()).To(HaveLen(2))
		Expect(RemovePending()).To(Equal(2))
		Expect(names()).To(BeEmpty())
		Expect(a.Commit()).To(MatchError(ContainSubstring("stopping")))
		b.Abort()
		_, err = Create(filepath.Join(dir, "c"))
		Expect(err).To(HaveOccurred())
		Expect(names()).To(BeEmpty())
	})
})
