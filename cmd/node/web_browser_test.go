//go:build browser

package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/weirstream/weir/internal/poll"
)

// browserPath is the Chromium or Chrome binary on PATH.
func browserPath(t *testing.T) string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatal("no chromium or chrome on PATH: run make test-browser, which installs it")
	return ""
}

// pageFacts is what the test reads from the rendered page.
type pageFacts struct {
	Operators  int      `json:"operators"`
	OpNames    []string `json:"op_names"`
	Bars       int      `json:"bars"`
	LastBar    string   `json:"last_bar"`
	KeyGroups  int      `json:"key_groups"`
	Owners     int      `json:"owners"`
	RecordsIn  string   `json:"records_in"`
	SourceRate string   `json:"source_rate"`
	Tasks      int      `json:"tasks"`
	Updated    string   `json:"updated"`
}

const readPage = `(() => {
  const q = s => document.querySelectorAll(s);
  const bars = q('#ckpt-svg rect.bar');
  const card = document.querySelector('.card[data-key="records in"] .v');
  const src = document.querySelector('#graph-svg g.op[data-operator="source"] text.rate');
  const owners = new Set([...q('#kg-map .kg-cell')].map(c => c.style.background));
  return {
    operators: q('#graph-svg g.op').length,
    op_names: [...q('#graph-svg g.op')].map(g => g.dataset.operator),
    bars: bars.length,
    last_bar: bars.length ? bars[bars.length - 1].dataset.id : "",
    key_groups: q('#kg-map .kg-cell').length,
    owners: owners.size,
    records_in: card ? card.textContent : "",
    source_rate: src ? src.textContent : "",
    tasks: q('#tasks tbody tr').length,
    updated: document.getElementById('updated').textContent,
  };
})()`

// TestWebPageInBrowser runs keycount in a real node process with --http,
// opens its page in headless Chromium and checks that the job graph, the
// checkpoint chart and the key-group map render, with numbers that change
// between two reads; it saves a screenshot.
func TestWebPageInBrowser(t *testing.T) {
	bin := buildNode(t)
	dir := t.TempDir()
	cmd := exec.Command(bin, "run", "keycount", "--duration", "10m", "--keys", "200", "--sleep-ms", "0.05",
		"--checkpoint-interval", "300ms", "--state-dir", filepath.Join(dir, "state"), "--http", "127.0.0.1:0")
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGKILL)
		<-exited
		if t.Failed() {
			t.Logf("node stderr (last 3000 bytes):\n%s", lastBytes(stderr.String(), 3000))
		}
	})
	var url string
	if !poll.Until(60*time.Second, 20*time.Millisecond, func() bool {
		if m := pageURL.FindStringSubmatch(stderr.String()); m != nil {
			url = m[1]
		}
		return url != ""
	}) {
		t.Fatal("node run did not announce its web page within 60 s")
	}

	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(browserPath(t)),
		chromedp.NoSandbox, chromedp.WindowSize(1280, 2200))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancelTimeout := context.WithTimeout(ctx, 3*time.Minute)
	defer cancelTimeout()
	if _, err := chromedp.Run(ctx, chromedp.Navigate(url)); err != nil {
		t.Fatalf("open %s: %v", url, err)
	}
	read := func() pageFacts {
		f, err := chromedp.Run(ctx, chromedp.Evaluate[pageFacts](readPage))
		if err != nil {
			t.Fatalf("read the page: %v", err)
		}
		return f
	}
	var first pageFacts
	if !poll.Until(90*time.Second, 100*time.Millisecond, func() bool {
		first = read()
		return first.Operators == 3 && first.Bars >= 2 && first.KeyGroups == 128 && first.RecordsIn != ""
	}) {
		t.Fatalf("the page did not render the graph, 2 checkpoint bars and 128 key groups: %+v", first)
	}
	if first.Owners != 2 || first.Tasks != 6 || first.OpNames[0] != "source" {
		t.Fatalf("page %+v: want the key groups coloured by 2 owners and 6 tasks", first)
	}
	var second pageFacts
	if !poll.Until(60*time.Second, 100*time.Millisecond, func() bool {
		second = read()
		return second.RecordsIn != first.RecordsIn && second.LastBar != first.LastBar && second.SourceRate != first.SourceRate
	}) {
		t.Fatalf("numbers did not change: first %+v, then %+v", first, second)
	}
	t.Logf("first read:  %+v", first)
	t.Logf("second read: %+v", second)

	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	path := os.Getenv("WEIR_SCREENSHOT")
	if path == "" {
		path = filepath.Join(os.TempDir(), "weir-web-page.png") // quality 100: PNG
	}
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot of the page: %s (%d bytes)", path, len(png))
}
