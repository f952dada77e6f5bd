import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { readConfig } from "../api";
import "../styles/base.css";
import "../styles/list.css";
import "../styles/environments.css";
import { DeployTargetsApp } from "../deploys/DeployTargetsApp";

const root = document.getElementById("root");
if (root) {
  createRoot(root).render(
    <StrictMode>
      <DeployTargetsApp config={readConfig()} />
    </StrictMode>,
  );
}
