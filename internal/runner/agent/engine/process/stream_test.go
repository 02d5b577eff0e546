package process

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestWorkDir(t *testing.T) {
	_, _, err := WorkDir([]string{"PATH=/bin"})
	assert.ErrorContains(t, err, "no HOME")

	home := t.TempDir()
	gotHome, dir, err := WorkDir([]string{"HOME=/elsewhere", "HOME=" + home})
	assert.NoError(t, err)
	assert.Equal(t, home, gotHome, "the last HOME wins")
	assert.Equal(t, filepath.Join(home, "work"), dir)
	assert.DirExists(t, dir)
}
