export { weeklyWater, type Planting } from "./watering.js";
