import { Modal } from "../../common/ui";

const SHORTCUTS: [string, string][] = [
  ["Ctrl+S", "Save a new version"],
  ["Ctrl+Enter", "Run the graph (Run tab)"],
  ["Ctrl+Z", "Undo"],
  ["Ctrl+Shift+Z / Ctrl+Y", "Redo"],
  ["Ctrl+C / Ctrl+X / Ctrl+V", "Copy / cut / paste nodes (works between graphs)"],
  ["Ctrl+A", "Select all nodes"],
  ["Delete / Backspace", "Delete the selected nodes or step (the root node asks first)"],
  ["Arrow keys", "Move the selected cards (undo with Ctrl+Z)"],
  ["Tab", "Go through the cards in graph order, root first, and their step rows"],
  ["Enter / Space", "Select the focused step row; ↑ ↓ go to the row above or below"],
  ["← → Home End", "Switch the side panel's tabs (when a tab has the focus)"],
  ["Shift+drag", "Select several nodes with a box"],
  ["Ctrl/Shift+click", "Add a node to the selection"],
  ["Esc", "Clear the selection"],
  ["V", "Switch between the Flow view and the Nodes view"],
  ["P", "Hide or show the side panel (remembered)"],
  ["← → ↑ ↓", "Flow view: go to the nearest box that way (Enter selects it)"],
  ["Alt+← / Alt+→", "Flow view: move the focused box earlier or later along its chain"],
  ["L", "Auto layout (Flow view: forget moved boxes)"],
  ["F", "Fit view"],
  ["?", "This help"],
];

export function HelpDialog({ open, onClose }: { open: boolean; onClose: () => void }) {
  return (
    <Modal open={open} title="Keyboard shortcuts" onClose={onClose}>
      <table className="shortcut-table">
        <tbody>
          {SHORTCUTS.map(([k, v]) => (
            <tr key={k}>
              <td>
                <kbd>{k}</kbd>
              </td>
              <td>{v}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <h4>In the Flow view (the default)</h4>
      <ul className="help-list">
        <li>Each model is a box; arrows show where its answer goes. A called node's boxes sit in a group (▾ collapses it).</li>
        <li>Click + on an arrow to insert a model there. Select a box for its actions: + after, parallel (an Ensemble), condition (a Switch), split (a Splitter), move, delete.</li>
        <li>Drag a box past its neighbour to reorder the chain; drag it elsewhere and it stays where you put it (L forgets the moves).</li>
        <li>Drag a service from the palette onto an arrow to insert it, onto a box to run it in parallel (or to fill in a box with no service yet), or onto the canvas to add it at the end. Drop an Ensemble, Switch or Splitter on a box for its branch.</li>
      </ul>
      <h4>In the Nodes view</h4>
      <ul className="help-list">
        <li>Drag Sequence, Switch, Ensemble or Splitter from the palette onto the canvas.</li>
        <li>Drag Service, URL or Node steps into a card; drag steps inside a card to reorder them.</li>
        <li>Drag from a step's handle (●) to another card to make it call that node; drag from a card's bottom handle to add such a step.</li>
        <li>Click a step or an edge to edit that step; click the background for the graph's own settings.</li>
      </ul>
    </Modal>
  );
}
