// Package layout checks that the tree keeps its design: product code by
// stage (core, dispatcher, runner), test rigs in testrig, developer tools in
// devtools, and no package importing a layer above its own.
package layout
